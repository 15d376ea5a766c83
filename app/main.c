/* main.c: (in progress) */
int main(void) { return 0; }
