/* ds-infer.c: (in progress) */
