/* ds-cpu-gemm.c: (in progress) */
