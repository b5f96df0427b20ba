// YAML from Debian's libyaml (libyaml-dev): the event parser, for the front matter of Markdown
// notes. Linked statically by NotesInterchange (-l:libyaml.a), so no loader work at start-up.
#include <yaml.h>
