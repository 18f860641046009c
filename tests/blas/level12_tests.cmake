# Level 1 and 2 tests: tessera_test(...) calls.
