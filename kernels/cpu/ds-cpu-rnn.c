/* ds-cpu-rnn.c: (in progress) */
