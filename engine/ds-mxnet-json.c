/* ds-mxnet-json.c: (in progress) */
