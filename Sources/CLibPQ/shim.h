// libpq, PostgreSQL's client library, from Debian's libpq-dev (headers in /usr/include/postgresql).
// The error fields are character macros; they are named here as constants Swift can see.
#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
#include <postgresql/libpq-fe.h>

static const int clibpq_diag_sqlstate = PG_DIAG_SQLSTATE;
static const int clibpq_diag_message_primary = PG_DIAG_MESSAGE_PRIMARY;
static const int clibpq_diag_message_detail = PG_DIAG_MESSAGE_DETAIL;
#endif
