// The shared object itself: every standard cblas_* name is exported (a program linked
// against another CBLAS finds them all), nothing but cblas_* is exported, and the default
// cblas_xerbla reports to stderr and returns.
#include <cstdio>
#include <memory>
#include <set>
#include <string>

#include <dlfcn.h>
#include <gtest/gtest.h>

#include "cblas_api.hpp"

namespace cblas_test {
namespace {

TEST(CblasAbi, EveryStandardSymbolIsExported) {
  void* lib = dlopen(TESSERA_CBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  std::vector<std::string> names = routine_names();
  names.push_back("cblas_xerbla");
  EXPECT_GE(names.size(), 90u);
  for (const std::string& n : names) EXPECT_NE(dlsym(lib, n.c_str()), nullptr) << n;
  dlclose(lib);
}

TEST(CblasAbi, OnlyCblasSymbolsAreExported) {
  const std::string cmd =
      std::string("nm -D --defined-only ") + TESSERA_CBLAS_LIBRARY + " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  ASSERT_NE(pipe, nullptr);
  std::set<std::string> exported;
  char line[1024];
  while (std::fgets(line, sizeof line, pipe.get()) != nullptr) {
    char type = 0;
    char sym[1000];
    if (std::sscanf(line, "%*s %c %999s", &type, sym) == 2 && type != 'A') exported.insert(sym);
  }
  if (exported.empty()) GTEST_SKIP() << "nm is not available to list the dynamic symbols";
  for (const std::string& s : exported) EXPECT_EQ(s.rfind("cblas_", 0), 0u) << s;
  for (const std::string& n : routine_names()) EXPECT_TRUE(exported.count(n)) << n;
  EXPECT_TRUE(exported.count("cblas_xerbla"));
}

TEST(CblasAbi, DefaultXerblaPrintsAndReturns) {
  std::vector<double> c = {7, 7, 7, 7};
  const std::vector<double> a(4, 1), b(4, 1);
  ::testing::internal::CaptureStderr();
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0, a.data(), 1, b.data(), 2,
              0.0, c.data(), 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("parameter 9 to cblas_dgemm was invalid"), std::string::npos) << err;
  EXPECT_NE(err.find("lda = 1"), std::string::npos) << err;
  EXPECT_EQ(c, std::vector<double>(4, 7));
}

}  // namespace
}  // namespace cblas_test
