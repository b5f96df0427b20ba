// SHA-256 from Debian's libcrypto (libssl-dev), through its low-level interface: a plain
// context struct, no provider lookup and no configuration file read at the first use (the
// EVP interface costs a process about 2 ms to start there). OpenSSL 3 deprecates this interface
// in favour of EVP but keeps it; the macro below keeps the compiler quiet about it.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>
