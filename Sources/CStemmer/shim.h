// Snowball stemmers from Debian's libstemmer-dev, for search terms. Linked statically by SearchEngine
// (-l:libstemmer.a), so no loader work at start-up.
#include <libstemmer.h>
