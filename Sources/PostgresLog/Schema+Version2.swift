extension Schema {
    /// Version 2: named notebooks, members, the roles that own and use the log, row-level security.
    ///
    /// - Roles (cluster-wide, created when absent, so init needs a superuser or CREATEROLE):
    ///   `notes_log_owner` (NOLOGIN) owns the tables and functions, so the `SECURITY DEFINER`
    ///   functions run as a role that can log in nowhere and owns nothing else;
    ///   `notes_log_user` (NOLOGIN) holds USAGE on the schema, SELECT on the tables (row-level
    ///   security shows a role the notebooks it is a member of) and EXECUTE on the functions;
    ///   `notes_log_creator` (NOLOGIN, a member of `notes_log_user`) may create notebooks. The
    ///   initializer becomes a member of `notes_log_owner` (it must be, to hand objects over).
    /// - `notebooks` gains a unique `name`; the notebooks of version 1 are named by their UUID's
    ///   text. `members` (notebook, role, can_write): the creator of a notebook is its writer.
    ///   Version 1's notebooks get as writers the upgrading role and every role that pushed to
    ///   them (they could append before, so they still can).
    /// - `append_batch` no longer creates notebooks: it appends only for a writer member (checked
    ///   inside, since a definer function bypasses row-level security) and sets
    ///   `pushed_by = session_user`. `notebook_id` finds (or creates) a notebook by name;
    ///   `share`, `unshare` and `members_of` manage and list members, for writers of the notebook
    ///   and members of `notes_log_owner`; `require_reader` explains a refused read.
    static let version2 = """
        DO $roles$
        BEGIN
            -- Two initializers of two databases may race to create a role: the loser finds it made.
            BEGIN
                IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'notes_log_owner') THEN
                    CREATE ROLE notes_log_owner NOLOGIN;
                END IF;
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
            END;
            BEGIN
                IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'notes_log_user') THEN
                    CREATE ROLE notes_log_user NOLOGIN;
                END IF;
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
            END;
            BEGIN
                IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'notes_log_creator') THEN
                    CREATE ROLE notes_log_creator NOLOGIN IN ROLE notes_log_user;
                END IF;
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
            END;
            IF NOT pg_catalog.pg_has_role(current_user, 'notes_log_owner', 'MEMBER') THEN
                EXECUTE format('GRANT notes_log_owner TO %I', current_user);
            END IF;
        END
        $roles$;

        ALTER TABLE notes_log.notebooks ADD COLUMN name text, ADD COLUMN created_by name;
        UPDATE notes_log.notebooks SET name = notebook::text, created_by = session_user;
        ALTER TABLE notes_log.notebooks ALTER COLUMN name SET NOT NULL,
            ADD CONSTRAINT notebooks_name_valid CHECK (char_length(name) BETWEEN 1 AND 200 AND name !~ '[[:cntrl:]]'),
            ADD CONSTRAINT notebooks_name_unique UNIQUE (name);

        -- Its check cost 23 µs per appended event (a locking lookup of the notebook row, of which
        -- append_batch already holds the lock) and guarded nothing: events are inserted by
        -- append_batch alone, for a notebook row it has locked, and notebooks are never deleted
        -- (a trigger refuses DELETE and TRUNCATE).
        ALTER TABLE notes_log.events DROP CONSTRAINT events_notebook_fkey;

        CREATE TABLE notes_log.members (
            notebook uuid NOT NULL REFERENCES notes_log.notebooks,
            role name NOT NULL,
            can_write boolean NOT NULL,
            added_by name NOT NULL DEFAULT session_user,
            added_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (notebook, role)
        );
        CREATE INDEX members_by_role ON notes_log.members (role, notebook);
        INSERT INTO notes_log.members (notebook, role, can_write)
            SELECT notebook, session_user, true FROM notes_log.notebooks
            UNION SELECT DISTINCT notebook, pushed_by, true FROM notes_log.events;

        -- A role sees its own memberships, and the notebooks and events of those.
        ALTER TABLE notes_log.members ENABLE ROW LEVEL SECURITY;
        ALTER TABLE notes_log.notebooks ENABLE ROW LEVEL SECURITY;
        ALTER TABLE notes_log.events ENABLE ROW LEVEL SECURITY;
        CREATE POLICY own_memberships ON notes_log.members FOR SELECT USING (role = session_user);
        CREATE POLICY members_read ON notes_log.notebooks FOR SELECT
            USING (notebook IN (SELECT m.notebook FROM notes_log.members m WHERE m.role = session_user));
        CREATE POLICY members_read ON notes_log.events FOR SELECT
            USING (notebook IN (SELECT m.notebook FROM notes_log.members m WHERE m.role = session_user));

        -- Whether the session's role administers the log (a member of the owner role, or a superuser).
        CREATE FUNCTION notes_log.is_admin() RETURNS boolean
        LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
        RETURN pg_has_role(session_user, 'notes_log_owner', 'MEMBER');

        -- Refuses a role that is neither a member of the notebook nor an administrator, naming
        -- the notebook as `label` (its quoted name, or its id for a caller that gave only that).
        CREATE FUNCTION notes_log.require_member(p_notebook uuid, label text) RETURNS void
        LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $fn$
        BEGIN
            IF NOT EXISTS (SELECT FROM notes_log.members m WHERE m.notebook = p_notebook AND m.role = session_user)
                AND NOT notes_log.is_admin()
            THEN
                RAISE EXCEPTION USING ERRCODE = 'NLP01',
                    MESSAGE = format('role %I is not a member of notebook %s: a writer of it runs notes_log.share',
                        session_user, label);
            END IF;
        END
        $fn$;

        -- The id of the notebook named p_name, which the session's role may use (a member, or an
        -- administrator); created with that role as its writer when absent and p_create is true,
        -- for members of notes_log_creator.
        CREATE FUNCTION notes_log.notebook_id(p_name text, p_create boolean) RETURNS uuid
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
        DECLARE
            me name := session_user;
            found_id uuid;
        BEGIN
            IF p_name IS NULL OR char_length(p_name) NOT BETWEEN 1 AND 200 OR p_name ~ '[[:cntrl:]]' THEN
                RAISE EXCEPTION USING ERRCODE = 'NLR01',
                    MESSAGE = 'a notebook''s name has 1 to 200 characters and no control character';
            END IF;
            SELECT n.notebook INTO found_id FROM notes_log.notebooks n WHERE n.name = p_name;
            IF NOT FOUND THEN
                IF NOT coalesce(p_create, false) THEN
                    RAISE EXCEPTION USING ERRCODE = 'NLP01',
                        MESSAGE = format('there is no notebook named %L on the remote (role %I)', p_name, me);
                END IF;
                IF NOT pg_has_role(me, 'notes_log_creator', 'MEMBER') THEN
                    RAISE EXCEPTION USING ERRCODE = 'NLP01',
                        MESSAGE = format('role %I may not create notebook %L: an administrator grants it notes_log_creator',
                            me, p_name);
                END IF;
                INSERT INTO notes_log.notebooks (notebook, name, created_by) VALUES (gen_random_uuid(), p_name, me)
                    ON CONFLICT (name) DO NOTHING RETURNING notebook INTO found_id;
                IF found_id IS NOT NULL THEN
                    INSERT INTO notes_log.members (notebook, role, can_write) VALUES (found_id, me, true);
                    RETURN found_id;
                END IF;
                -- Another session created it meanwhile.
                SELECT n.notebook INTO found_id FROM notes_log.notebooks n WHERE n.name = p_name;
            END IF;
            PERFORM notes_log.require_member(found_id, quote_literal(p_name));
            RETURN found_id;
        END
        $fn$;

        -- Refuses, naming the notebook and the role, a read by a role that is not a member.
        CREATE FUNCTION notes_log.require_reader(p_notebook uuid) RETURNS void
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
        BEGIN
            IF NOT EXISTS (SELECT FROM notes_log.notebooks n WHERE n.notebook = p_notebook) THEN
                RAISE EXCEPTION USING ERRCODE = 'NLP01',
                    MESSAGE = format('there is no notebook %s on the remote (role %I)', p_notebook, session_user);
            END IF;
            PERFORM notes_log.require_member(p_notebook, p_notebook::text);
        END
        $fn$;

        -- The id of the notebook named p_name; refused, naming the role, when there is none.
        CREATE FUNCTION notes_log.named_notebook(p_name text) RETURNS uuid
        LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $fn$
        DECLARE
            found_id uuid;
        BEGIN
            SELECT n.notebook INTO found_id FROM notes_log.notebooks n WHERE n.name = p_name;
            IF NOT FOUND THEN
                RAISE EXCEPTION USING ERRCODE = 'NLP01',
                    MESSAGE = format('there is no notebook named %L on the remote (role %I)', p_name, session_user);
            END IF;
            RETURN found_id;
        END
        $fn$;

        -- The notebook named p_name, when the session's role may change its members (a writer,
        -- or an administrator); `what` names the attempt in the refusal.
        CREATE FUNCTION notes_log.managed_notebook(p_name text, what text) RETURNS uuid
        LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $fn$
        DECLARE
            found_id uuid := notes_log.named_notebook(p_name);
            writes boolean;
        BEGIN
            SELECT m.can_write INTO writes FROM notes_log.members m
                WHERE m.notebook = found_id AND m.role = session_user;
            IF coalesce(writes, false) OR notes_log.is_admin() THEN
                RETURN found_id;
            END IF;
            RAISE EXCEPTION USING ERRCODE = 'NLP01',
                MESSAGE = format('role %I may not %s notebook %L: only its writers may', session_user, what, p_name);
        END
        $fn$;

        -- Refuses a change of members that leaves a notebook without a writer.
        CREATE FUNCTION notes_log.require_writer_left(p_notebook uuid, p_name text) RETURNS void
        LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $fn$
        BEGIN
            IF NOT EXISTS (SELECT FROM notes_log.members m WHERE m.notebook = p_notebook AND m.can_write) THEN
                RAISE EXCEPTION USING ERRCODE = 'NLP01',
                    MESSAGE = format('notebook %L would have no writer left: share it with a writer first', p_name);
            END IF;
        END
        $fn$;

        -- Makes p_role a member of the notebook named p_name (a writer when p_can_write), or
        -- changes its right. For the notebook's writers and administrators.
        CREATE FUNCTION notes_log.share(p_name text, p_role text, p_can_write boolean) RETURNS void
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
        DECLARE
            book uuid := notes_log.managed_notebook(p_name, 'share');
        BEGIN
            IF p_role IS NULL OR NOT EXISTS (SELECT FROM pg_roles r WHERE r.rolname = p_role) THEN
                RAISE EXCEPTION USING ERRCODE = 'NLR01',
                    MESSAGE = format('there is no role %I to share notebook %L with', p_role, p_name);
            END IF;
            INSERT INTO notes_log.members AS m (notebook, role, can_write)
                VALUES (book, p_role, coalesce(p_can_write, false))
                ON CONFLICT (notebook, role) DO UPDATE
                SET can_write = EXCLUDED.can_write, added_by = session_user, added_at = now();
            PERFORM notes_log.require_writer_left(book, p_name);
        END
        $fn$;

        -- Ends p_role's membership of the notebook named p_name; false when it was no member.
        CREATE FUNCTION notes_log.unshare(p_name text, p_role text) RETURNS boolean
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
        DECLARE
            book uuid := notes_log.managed_notebook(p_name, 'unshare');
        BEGIN
            DELETE FROM notes_log.members m WHERE m.notebook = book AND m.role = p_role;
            IF NOT FOUND THEN
                RETURN false;
            END IF;
            PERFORM notes_log.require_writer_left(book, p_name);
            RETURN true;
        END
        $fn$;

        -- The members of the notebook named p_name, for its members and administrators.
        CREATE FUNCTION notes_log.members_of(p_name text)
        RETURNS TABLE (role name, can_write boolean, added_by name)
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
        DECLARE
            book uuid := notes_log.named_notebook(p_name);
        BEGIN
            PERFORM notes_log.require_member(book, quote_literal(p_name));
            RETURN QUERY SELECT m.role, m.can_write, m.added_by FROM notes_log.members m
                WHERE m.notebook = book ORDER BY m.role;
        END
        $fn$;
        """
        + appendBatch2 + ownership2
}

extension Schema {
    /// Version 2's `append_batch`: version 1's rules and answers, appending only for a writer
    /// member of an existing notebook, with `pushed_by` set to the session's role; and set-based.
    ///
    /// Version 1 ran a statement or a call of a helper function per event (the helpers, with their
    /// fixed `search_path`, are never inlined): 3,600 events/s. Here each step is one statement
    /// over the whole batch (checks, stored ids, stream versions, envelopes, the insert), and the
    /// only loop left is the chain of digests, one `sha256` per event. `leb128` has no `SET`
    /// clause, so the planner inlines it; it names every function with its schema.
    static let appendBatch2 = """
        -- LEB128 of a non-negative integer below 2^35 as one expression (inlined by the planner);
        -- larger ones, and negative ones (refused), go to varint. (|, & and << share one
        -- precedence in PostgreSQL: every operand is parenthesized.)
        -- Not STRICT: the planner inlines a strict SQL function only when its body is strict, and a
        -- CASE is not (NULL goes to varint, which is, and answers NULL).
        CREATE FUNCTION notes_log.leb128(v bigint) RETURNS bytea
        LANGUAGE sql IMMUTABLE
        RETURN CASE
            WHEN v < 0 THEN notes_log.varint(v)
            WHEN v < 128 THEN pg_catalog.substring(pg_catalog.int8send(v), 8)
            WHEN v < 16384 THEN pg_catalog.substring(pg_catalog.int8send(
                (((v & 127) | 128) << 8) | (v >> 7)), 7)
            WHEN v < 2097152 THEN pg_catalog.substring(pg_catalog.int8send(
                (((v & 127) | 128) << 16) | ((((v >> 7) & 127) | 128) << 8) | (v >> 14)), 6)
            WHEN v < 268435456 THEN pg_catalog.substring(pg_catalog.int8send(
                (((v & 127) | 128) << 24) | ((((v >> 7) & 127) | 128) << 16) | ((((v >> 14) & 127) | 128) << 8)
                | (v >> 21)), 5)
            WHEN v < 34359738368 THEN pg_catalog.substring(pg_catalog.int8send(
                (((v & 127) | 128) << 32) | ((((v >> 7) & 127) | 128) << 24) | ((((v >> 14) & 127) | 128) << 16)
                | ((((v >> 21) & 127) | 128) << 8) | (v >> 28)), 4)
            ELSE notes_log.varint(v)
        END;

        -- Appends one batch to a notebook of which the session's role is a writer. Streams come as
        -- groups (stream, expected kind, expected version; kinds: 0 any, 1 no stream, 2 stream
        -- exists, 3 exact version), events in group order with their group's 1-based index.
        -- Returns one row per event (ordinal, position, appended) and a last row of ordinal 0: the
        -- head's position, instant and digest. An id the notebook holds answers its position and
        -- writes nothing; a broken expectation (checked at each group's first new event, after the
        -- batch's earlier events of the stream) raises NLV01 (detail: "group actual-version") and
        -- writes nothing.
        CREATE OR REPLACE FUNCTION notes_log.append_batch(
            p_notebook uuid, p_streams text[], p_kinds smallint[], p_versions bigint[],
            p_groups integer[], p_ids uuid[], p_types text[], p_schema_versions integer[],
            p_actors text[], p_commands text[], p_causations uuid[], p_correlations uuid[], p_payloads bytea[]
        ) RETURNS TABLE (ordinal integer, event_position bigint, appended boolean, recorded_at bigint, digest bytea)
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
        DECLARE
            n integer := coalesce(cardinality(p_ids), 0);
            g_count integer := coalesce(cardinality(p_streams), 0);
            head record;
            at_now bigint;
            chain bytea;
            bad record;
            may_write boolean;
            -- Per event, in batch order: the position of a stored id (NULL when new).
            stored bigint[];
            -- Per new event, in batch order: ordinal, stream, version, position, envelope body.
            f_o integer[];
            f_stream text[];
            f_version bigint[];
            f_position bigint[];
            f_body bytea[];
            broken_group integer;
            broken_actual bigint;
            digests bytea[] := '{}';
            body bytea;
            k integer := 0;
        BEGIN
            IF p_notebook IS NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'no notebook named';
            END IF;
            IF n = 0 OR n > 1000 THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01',
                    MESSAGE = format('a batch holds 1 to 1000 events, not %s', n);
            END IF;
            IF g_count = 0 OR cardinality(p_kinds) IS DISTINCT FROM g_count
                OR cardinality(p_versions) IS DISTINCT FROM g_count
                OR cardinality(p_groups) IS DISTINCT FROM n OR cardinality(p_types) IS DISTINCT FROM n
                OR cardinality(p_schema_versions) IS DISTINCT FROM n OR cardinality(p_actors) IS DISTINCT FROM n
                OR cardinality(p_commands) IS DISTINCT FROM n OR cardinality(p_causations) IS DISTINCT FROM n
                OR cardinality(p_correlations) IS DISTINCT FROM n OR cardinality(p_payloads) IS DISTINCT FROM n
            THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'the batch''s arrays differ in length';
            END IF;
            IF (SELECT sum(octet_length(x)) FROM unnest(p_payloads) x) > 16777216 THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'the batch holds more than 16 MiB of payload';
            END IF;
            IF (SELECT count(DISTINCT x) FROM unnest(p_ids) x) <> n OR array_position(p_ids, NULL) IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'an event id is missing or appears twice';
            END IF;
            SELECT min(s.i) AS i INTO bad
                FROM unnest(p_streams, p_kinds, p_versions) WITH ORDINALITY AS s(stream, kind, version, i)
                WHERE s.stream IS NULL OR octet_length(s.stream) NOT BETWEEN 1 AND 1024
                    OR s.kind IS NULL OR s.kind NOT BETWEEN 0 AND 3 OR s.version IS NULL OR s.version < 0;
            IF bad.i IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format('stream group %s is not valid', bad.i);
            END IF;
            SELECT min(x.i) AS i INTO bad FROM (
                SELECT e.i, e.g, lag(e.g) OVER (ORDER BY e.i) AS before, e.type, e.sv, e.actor, e.payload
                FROM unnest(p_groups, p_types, p_schema_versions, p_actors, p_payloads)
                    WITH ORDINALITY AS e(g, type, sv, actor, payload, i)
            ) x
            WHERE x.g IS NULL OR x.g < greatest(x.before, 1) OR x.g > g_count
                OR x.type IS NULL OR octet_length(x.type) NOT BETWEEN 1 AND 256
                OR x.sv IS NULL OR x.sv < 0 OR x.actor IS NULL OR x.payload IS NULL;
            IF bad.i IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format('event %s is not valid', bad.i);
            END IF;

            -- A definer function bypasses row-level security: the membership is checked here.
            SELECT m.can_write INTO may_write FROM notes_log.members m
                WHERE m.notebook = p_notebook AND m.role = session_user;
            IF NOT coalesce(may_write, false) THEN
                SELECT * INTO head FROM notes_log.notebooks nb WHERE nb.notebook = p_notebook;
                IF NOT FOUND THEN
                    RAISE EXCEPTION USING ERRCODE = 'NLP01', MESSAGE = format(
                        'there is no notebook %s on the remote (role %I): notebooks are created by name',
                        p_notebook, session_user);
                ELSIF may_write IS NULL THEN
                    RAISE EXCEPTION USING ERRCODE = 'NLP01', MESSAGE = format(
                        'role %I is not a member of notebook %s: a writer of it runs notes_log.share',
                        session_user, p_notebook);
                END IF;
                RAISE EXCEPTION USING ERRCODE = 'NLP01', MESSAGE = format(
                    'role %I may read notebook %L but not append to it: a writer shares it with can_write',
                    session_user, head.name);
            END IF;
            SELECT * INTO head FROM notes_log.notebooks nb WHERE nb.notebook = p_notebook FOR UPDATE;
            chain := head.head_digest;
            -- The shared log's time never goes back: the server's clock, or the last instant.
            at_now := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
            IF head.head_recorded_at > at_now THEN
                at_now := head.head_recorded_at;
            END IF;

            -- In one statement: every event's stored position; every new event's stream, version
            -- (the stream's stored events and the batch's new ones before it), position and
            -- envelope body of format 1 (see envelope_body); the first broken expectation, checked
            -- at each group's first new event, as (group, actual version). A stream's stored
            -- version is looked up once per group (by its number, not joined by its name: a join
            -- on 25 estimated rows became a nested loop comparing 1000 x 1000 names), and
            -- `versioned` is materialized (inlined, each use of a version, 16 in leb128, would
            -- look it up again).
            WITH grp AS MATERIALIZED (
                SELECT s.g, s.stream, s.kind, s.expected,
                    (SELECT coalesce(max(ev.version), 0) FROM notes_log.events ev
                        WHERE ev.notebook = p_notebook AND ev.stream = s.stream) AS base
                FROM unnest(p_streams, p_kinds, p_versions) WITH ORDINALITY AS s(stream, kind, expected, g)
            ), e AS (
                SELECT x.i, x.id, x.g, grp.stream, grp.kind, grp.expected, grp.base, x.type, x.sv, x.actor, x.cmd,
                    x.caus, x.corr, x.payload,
                    (SELECT ev.position FROM notes_log.events ev WHERE ev.notebook = p_notebook AND ev.event_id = x.id)
                        AS stored
                FROM unnest(p_ids, p_groups, p_types, p_schema_versions, p_actors, p_commands, p_causations,
                    p_correlations, p_payloads) WITH ORDINALITY AS x(id, g, type, sv, actor, cmd, caus, corr, payload, i)
                JOIN grp ON grp.g = x.g
            ), fresh AS (
                SELECT e.*, row_number() OVER w AS k, lag(e.g) OVER w IS DISTINCT FROM e.g AS first_of_group,
                    count(*) OVER (PARTITION BY e.stream ORDER BY e.i) AS nth
                FROM e WHERE e.stored IS NULL
                WINDOW w AS (ORDER BY e.i)
            ), versioned AS MATERIALIZED (
                SELECT f.*, f.base + f.nth AS version, head.head_position + f.k AS position,
                    f.first_of_group AND (
                        (f.kind = 1 AND f.base + f.nth - 1 <> 0) OR (f.kind = 2 AND f.base + f.nth - 1 = 0)
                        OR (f.kind = 3 AND f.base + f.nth - 1 <> f.expected)) AS broken
                FROM fresh f
            )
            SELECT (SELECT array_agg(e.stored ORDER BY e.i) FROM e),
                array_agg(v.i ORDER BY v.i), array_agg(v.stream ORDER BY v.i), array_agg(v.version ORDER BY v.i),
                array_agg(v.position ORDER BY v.i),
                array_agg('\\x01'::bytea || uuid_send(v.id) || int8send(at_now)
                    || notes_log.leb128(v.version) || notes_log.leb128(v.sv)
                    || notes_log.leb128(octet_length(v.type)) || convert_to(v.type, 'UTF8')
                    || notes_log.leb128(octet_length(v.stream)) || convert_to(v.stream, 'UTF8')
                    || notes_log.leb128(octet_length(v.actor)) || convert_to(v.actor, 'UTF8')
                    || CASE WHEN v.cmd IS NULL THEN '\\x00'::bytea
                        ELSE '\\x01'::bytea || notes_log.leb128(octet_length(v.cmd)) || convert_to(v.cmd, 'UTF8') END
                    || CASE WHEN v.caus IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || uuid_send(v.caus) END
                    || CASE WHEN v.corr IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || uuid_send(v.corr) END
                    || notes_log.leb128(octet_length(v.payload)) || v.payload ORDER BY v.i),
                (array_agg(v.g ORDER BY v.i) FILTER (WHERE v.broken))[1],
                (array_agg(v.version - 1 ORDER BY v.i) FILTER (WHERE v.broken))[1]
                INTO stored, f_o, f_stream, f_version, f_position, f_body, broken_group, broken_actual
                FROM versioned v;
            IF broken_group IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLV01',
                    MESSAGE = format('stream %s is at version %s', p_streams[broken_group], broken_actual),
                    DETAIL = format('%s %s', broken_group, broken_actual);
            END IF;

            IF f_o IS NOT NULL THEN
                FOREACH body IN ARRAY f_body LOOP
                    k := k + 1;
                    chain := sha256(chain || body);
                    digests[k] := chain;
                END LOOP;
                INSERT INTO notes_log.events (
                    notebook, position, event_id, stream, version, type, schema_version, actor, command,
                    causation_id, correlation_id, payload, recorded_at, digest, pushed_by)
                SELECT p_notebook, f.position, e.id, f.stream, f.version, e.type, e.sv, e.actor, e.cmd, e.caus, e.corr,
                    e.payload, at_now, f.digest, session_user
                FROM unnest(f_o, f_stream, f_version, f_position, digests) AS f(i, stream, version, position, digest)
                JOIN unnest(p_ids, p_types, p_schema_versions, p_actors, p_commands, p_causations, p_correlations,
                    p_payloads) WITH ORDINALITY AS e(id, type, sv, actor, cmd, caus, corr, payload, i) ON e.i = f.i;
                UPDATE notes_log.notebooks
                    SET head_position = f_position[k], head_recorded_at = at_now, head_digest = chain
                    WHERE notebook = p_notebook;
                head.head_position := f_position[k];
                head.head_recorded_at := at_now;
            END IF;
            RETURN QUERY
                SELECT s.i::integer, coalesce(s.pos, f.position), s.pos IS NULL, NULL::bigint, NULL::bytea
                FROM unnest(stored) WITH ORDINALITY AS s(pos, i)
                LEFT JOIN unnest(f_o, f_position) AS f(i, position) ON f.i = s.i
                ORDER BY s.i;
            ordinal := 0; event_position := head.head_position; appended := false;
            recorded_at := head.head_recorded_at; digest := chain;
            RETURN NEXT;
        END
        $fn$;

        """

    /// Version 2's owners and grants: the owner role takes every table and function of the
    /// schema (the schema itself stays with the administrator who made it), PUBLIC loses every
    /// right, `notes_log_user` gets what a device needs, in the transaction that creates them.
    static let ownership2 = """
        GRANT USAGE ON SCHEMA notes_log TO notes_log_owner, notes_log_user;
        DO $own$
        DECLARE
            item record;
        BEGIN
            FOR item IN SELECT c.oid::regclass AS name FROM pg_catalog.pg_class c
                WHERE c.relnamespace = 'notes_log'::regnamespace AND c.relkind = 'r'
            LOOP
                EXECUTE format('ALTER TABLE %s OWNER TO notes_log_owner', item.name);
            END LOOP;
            FOR item IN SELECT p.oid::regprocedure AS name FROM pg_catalog.pg_proc p
                WHERE p.pronamespace = 'notes_log'::regnamespace
            LOOP
                EXECUTE format('ALTER FUNCTION %s OWNER TO notes_log_owner', item.name);
            END LOOP;
        END
        $own$;
        REVOKE ALL ON ALL TABLES IN SCHEMA notes_log FROM PUBLIC;
        REVOKE ALL ON ALL FUNCTIONS IN SCHEMA notes_log FROM PUBLIC;
        GRANT SELECT ON notes_log.schema_version, notes_log.notebooks, notes_log.events, notes_log.members
            TO notes_log_user;
        GRANT EXECUTE ON FUNCTION
            notes_log.append_batch(uuid, text[], smallint[], bigint[], integer[], uuid[], text[], integer[], text[],
                text[], uuid[], uuid[], bytea[]),
            notes_log.notebook_id(text, boolean), notes_log.require_reader(uuid),
            notes_log.share(text, text, boolean), notes_log.unshare(text, text), notes_log.members_of(text)
            TO notes_log_user;
        """
}
