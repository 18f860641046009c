#pragma once

#include <memory>

#include <tessera/hal/hal.hpp>

namespace tessera::hal {
std::unique_ptr<Backend> make_cpu_backend();
}
