# trsm, trmm, syrk, trtri tests: tessera_test(...) calls.
