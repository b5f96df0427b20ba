import Basics
import Testing

@Suite("Password scrubbing")
struct PasswordScrubbingTests {
    /// (text, what it scrubs to, the secrets that must not be left in it). What libpq reads as
    /// the password of each was checked with PQconninfoParse (see PostgresLogTests).
    static let cases: [(String, String, [String])] = [
        // Keyword/value strings: bare, quoted, escaped, spaced, in any case.
        ("host=db password=hunter2 dbname=n", "host=db password=*** dbname=n", ["hunter2"]),
        ("host=db PASSWORD = 'hun ter\\'2' dbname=n", "host=db password=*** dbname=n", ["hun", "ter"]),
        // A double quote is an ordinary character to libpq: part of the password.
        ("host=x password=\"pw1\"", "host=x password=***", ["pw1", "\""]),
        // ... but a value in double quotes is hidden whole: whoever wrote it meant what they hold.
        ("host=x password=\"pw 1\" user=u", "host=x password=*** user=u", ["pw", "1\""]),
        ("host=h password=\"my secret\" dbname=d", "host=h password=*** dbname=d", ["my", "secret"]),
        // A backslash escapes the byte after it, a space too, outside quotes as inside.
        ("host=x password=a\\ bsecret", "host=x password=***", ["bsecret"]),
        ("host=x password=a\\'b\\\\c dbname=n", "host=x password=*** dbname=n", ["a\\'b", "c"]),
        ("host=x password='a\\'b c' user=u", "host=x password=*** user=u", ["a\\'b", "b c"]),
        ("host=x password='it\\\\' user=u", "host=x password=*** user=u", ["it"]),
        ("host=x password=\tsecret\tuser=u", "host=x password=***\tuser=u", ["secret"]),
        // No value before the next keyword: libpq skips the spaces and takes it as the value.
        ("password= host=secret", "password=***", ["secret"]),
        // Not closed: libpq refuses it, and all of the rest may be the password.
        ("host=x password='abc def user=u", "host=x password=***", ["abc", "def", "user"]),
        // Several passwords in one string, and one quoted inside another keyword's value.
        ("password=one host=h PassWord=two", "password=*** host=h password=***", ["one", "two"]),
        (
            "application_name='x password=' password='my secret' host=h",
            "application_name='x password=***' password=*** host=h", ["my", "secret"]
        ),
        ("options='-c x=y' password=s3cret", "options='-c x=y' password=***", ["s3cret"]),
        // URIs, with and without a password, percent-encoded, with '?' or '@' or a space in it.
        ("postgresql://ana:hunter2@db:5432/notes", "postgresql://ana:***@db:5432/notes", ["hunter2"]),
        ("postgresql://ana@db:5432/notes", "postgresql://ana@db:5432/notes", []),
        ("postgresql://db:5432/notes?sslmode=require", "postgresql://db:5432/notes?sslmode=require", []),
        ("postgresql://db:5432", "postgresql://db:5432", []),
        ("postgresql://:pw1@db/notes", "postgresql://:***@db/notes", ["pw1"]),
        ("postgresql://ana:p%40ss%20w@db/notes", "postgresql://ana:***@db/notes", ["p%40", "ss", "%20w"]),
        ("postgresql://ana:p?x@db/notes", "postgresql://ana:***@db/notes", ["p?x"]),
        // A `/` unencoded in the password (base64): libpq reads host `u`, port `sec`; hidden all
        // the same. An `@` of the query is no end of a password.
        ("postgresql://u:sec/ret@h/d", "postgresql://u:***@h/d", ["sec", "ret"]),
        ("postgresql://db:5432/notes?user=a@b", "postgresql://db:5432/notes?user=a@b", []),
        ("postgresql://ana:p@ss@db/notes", "postgresql://ana:***@db/notes", ["ss@"]),
        ("postgresql://ana:pa ss@db/notes", "postgresql://ana:***@db/notes", ["pa", "ss"]),
        (
            "postgres://db/notes?user=ana&password=hunter2&sslmode=require",
            "postgres://db/notes?user=ana&password=***&sslmode=require", ["hunter2"]
        ),
        ("postgresql://db/notes?pass%77ord=s%20x&user=u", "postgresql://db/notes?pass%77ord=***&user=u", ["s%20x"]),
        ("postgresql://db/notes?password=a b", "postgresql://db/notes?password=***", ["a b"]),
        (
            "postgresql://ana:one@db/notes?password=two&sslmode=require",
            "postgresql://ana:***@db/notes?password=***&sslmode=require", ["one", "two"]
        ),
        ("dbname=postgresql://ana:pw1@db/notes", "dbname=postgresql://ana:***@db/notes", ["pw1"]),
        // Messages: only what follows `password=` is hidden.
        ("password authentication failed for user \"ana\"", "password authentication failed for user \"ana\"", []),
        (
            "invalid address (host=db password=\"x y\"): no such host",
            "invalid address (host=db password=***): no such host", ["\"x", "y\""]
        ),
    ]

    @Test("a password is hidden whole, whatever the form of the address", arguments: cases.indices)
    func scrubbed(_ index: Int) {
        let (text, expected, secrets) = Self.cases[index]
        let scrubbed = PasswordScrubbing.scrubbed(text)
        #expect(scrubbed == expected, "\(text)")
        for secret in secrets { #expect(!scrubbed.contains(secret), "\(secret) left in \(scrubbed)") }
    }

    @Test("text without a password is left as it is")
    func untouched() {
        for text in ["", "host=db dbname=notes", "it's a 'quote", "héllo wörld = 'x'", "a\\", "password", "://", "?&="]
        {
            #expect(PasswordScrubbing.scrubbed(text) == text)
        }
    }
}
