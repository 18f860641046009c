// Runs the tessera binary (TESSERA_CLI, set by CMake) and captures exit code, stdout, stderr.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "test_util.hpp"

namespace tessera::testing {

struct Outcome {
  int code;
  std::string out, err;
};

// `env` is prepended to the command line (e.g. "TESSERA_MAX_ISA=avx2").
inline Outcome run(const std::string& args, const std::string& env = "") {
  TempDir dir;
  std::string err_file = dir.file("stderr");
  std::string cmd = env + " " TESSERA_CLI " " + args + " 2>" + err_file;
  Outcome r;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  return r;
}

inline int lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace tessera::testing
