/* ds-npy.c: (in progress) */
