// Runs the checks of the mutation corpus: run_mutation.sh compiles the code funcgen generated for
// the accepted cases, with their checks, into a shared object; this program, which holds the fg
// runtime (linked whole and exported), loads it and runs them. So the test compiles the cases
// without knowing how the runtime is linked.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s cases.so\n", argv[0]);
    return 2;
  }
  void* cases = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (cases == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 2;
  }
  using Run = int (*)();
  auto run = reinterpret_cast<Run>(dlsym(cases, "mutation_run"));
  if (run == nullptr) {
    std::fprintf(stderr, "%s has no mutation_run\n", argv[1]);
    return 2;
  }
  return run() == 0 ? 0 : 1;
}
