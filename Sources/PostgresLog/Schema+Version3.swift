extension Schema {
    /// Version 3: the same `append_batch` (arguments, answers, checks and refusals), faster.
    ///
    /// - A batch is taken as new unless its first id is stored (a retry): no probe of each id. An
    ///   id stored after all (or twice in the batch) makes the unique index refuse the insert,
    ///   which is undone (a subtransaction), and the batch goes through the probing path, version
    ///   2's: every id probed, the stored ones answered, the others checked and appended.
    /// - A group expecting no stream or an exact version needs no lookup of the stream's last
    ///   version: the unique index on (notebook, stream, version) refuses a version that is
    ///   taken, and an exact version's own row is probed (one equality lookup). Other groups
    ///   (any version, stream exists) look the last version up. A broken expectation, or a
    ///   stream in several groups of the batch, goes to the probing path, which words the refusal.
    /// - Versions and positions come from narrow rows; the envelopes from the arrays zipped (no
    ///   join, no sort of the payloads).
    /// - A batch holds up to 5,000 events (was 1,000).
    /// - No statistics on `events.notebook` (see the statement's comment).
    /// - `restore_batch`: a device gives back, unchanged, the events it holds as confirmed past
    ///   the head of a notebook whose server came back from an older backup.
    static let version3 = """
        -- Without statistics on the notebook column the planner takes a notebook for many rows
        -- (a default selectivity), never for one: with them, a notebook that is new since the last
        -- ANALYZE looked like a single row, and any index starting with the notebook seemed as good as
        -- another (an id probe scanned a stream index, a stream lookup scanned the id index: each a
        -- scan of the whole notebook).
        ALTER TABLE notes_log.events ALTER COLUMN notebook SET STATISTICS 0;
        -- ANALYZE no longer gathers them, but keeps those it gathered before: a superuser removes them
        -- (anyone else leaves them; they go stale as notebooks are added).
        DO $stats$
        BEGIN
            IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) THEN
                DELETE FROM pg_catalog.pg_statistic s
                    WHERE s.starelid = 'notes_log.events'::regclass
                        AND s.staattnum = (SELECT a.attnum FROM pg_catalog.pg_attribute a
                            WHERE a.attrelid = 'notes_log.events'::regclass AND a.attname = 'notebook');
            END IF;
        END
        $stats$;

        -- A payload past 2 kB was compressed with pglz as it was inserted, a large part of a push's
        -- time when bodies are long; lz4 compresses several times faster. Rows stored before keep
        -- theirs (both are read). A server built without lz4 keeps pglz.
        DO $lz4$
        BEGIN
            ALTER TABLE notes_log.events ALTER COLUMN payload SET COMPRESSION lz4;
        EXCEPTION WHEN feature_not_supported THEN NULL;
        END
        $lz4$;

        \(appendBatch(writtenAt: false))

        \(restoreBatch(writtenAt: false))
        REVOKE ALL ON FUNCTION notes_log.restore_batch(uuid, bigint, uuid[], text[], bigint[], text[], integer[], text[],
            text[], uuid[], uuid[], bytea[], bigint[], bytea[]) FROM PUBLIC;
        ALTER FUNCTION notes_log.restore_batch(uuid, bigint, uuid[], text[], bigint[], text[], integer[], text[], text[],
            uuid[], uuid[], bytea[], bigint[], bytea[]) OWNER TO notes_log_owner;
        GRANT EXECUTE ON FUNCTION notes_log.restore_batch(uuid, bigint, uuid[], text[], bigint[], text[], integer[], text[],
            text[], uuid[], uuid[], bytea[], bigint[], bytea[]) TO notes_log_user;
        """

    /// `append_batch` of version 3 (`writtenAt` false: arguments and envelopes of format 1) or of
    /// version 4 (true: a last argument `p_written_ats`, each event's device instant or NULL, and
    /// the envelope of format 2 for an event that has one).
    static func appendBatch(writtenAt w: Bool) -> String {
        """
        CREATE OR REPLACE FUNCTION notes_log.append_batch(
            p_notebook uuid, p_streams text[], p_kinds smallint[], p_versions bigint[],
            p_groups integer[], p_ids uuid[], p_types text[], p_schema_versions integer[],
            p_actors text[], p_commands text[], p_causations uuid[], p_correlations uuid[], p_payloads bytea[]\(w ? ", p_written_ats bigint[]" : "")
        ) RETURNS TABLE (ordinal integer, event_position bigint, appended boolean, recorded_at bigint, digest bytea)
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
        DECLARE
            n integer := coalesce(cardinality(p_ids), 0);
            g_count integer := coalesce(cardinality(p_streams), 0);
            head record;
            at_now bigint;
            chain bytea;
            bad integer;
            missing_id boolean;
            payload_bytes bigint;
            may_write boolean;
            probe boolean;
            distinct_streams boolean;
            collided boolean;
            -- Per event, in batch order: the position of a stored id (NULL when new; probing only).
            stored bigint[];
            -- Per new event, in batch order: ordinal, stream, version, position, envelope body.
            f_o integer[];
            f_stream text[];
            f_version bigint[];
            f_position bigint[];
            f_body bytea[];
            broken_group integer;
            broken_actual bigint;
            digests bytea[];
            body bytea;
            k integer;
        BEGIN
            IF p_notebook IS NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'no notebook named';
            END IF;
            IF n = 0 OR n > 5000 THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01',
                    MESSAGE = format('a batch holds 1 to 5000 events, not %s', n);
            END IF;
            IF g_count = 0 OR cardinality(p_kinds) IS DISTINCT FROM g_count
                OR cardinality(p_versions) IS DISTINCT FROM g_count
                OR cardinality(p_groups) IS DISTINCT FROM n OR cardinality(p_types) IS DISTINCT FROM n
                OR cardinality(p_schema_versions) IS DISTINCT FROM n OR cardinality(p_actors) IS DISTINCT FROM n
                OR cardinality(p_commands) IS DISTINCT FROM n OR cardinality(p_causations) IS DISTINCT FROM n
                OR cardinality(p_correlations) IS DISTINCT FROM n OR cardinality(p_payloads) IS DISTINCT FROM n\(arraysAgree(w))
            THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'the batch''s arrays differ in length';
            END IF;
            -- One pass over the events: the payload's size, a missing id, the first invalid event.
            SELECT sum(octet_length(x.payload)), bool_or(x.id IS NULL),
                min(x.i) FILTER (WHERE x.g IS NULL OR x.g < greatest(x.before, 1) OR x.g > g_count
                    OR x.type IS NULL OR octet_length(x.type) NOT BETWEEN 1 AND 256
                    OR x.sv IS NULL OR x.sv < 0 OR x.actor IS NULL OR x.payload IS NULL)
                INTO payload_bytes, missing_id, bad
                FROM (SELECT e.*, lag(e.g) OVER (ORDER BY e.i) AS before
                    FROM unnest(p_ids, p_groups, p_types, p_schema_versions, p_actors, p_payloads)
                        WITH ORDINALITY AS e(id, g, type, sv, actor, payload, i)) x;
            IF payload_bytes > 16777216 THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'the batch holds more than 16 MiB of payload';
            END IF;
            -- An id twice is found by the probing path below (the unique index sends the batch there).
            IF missing_id THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'an event id is missing or appears twice';
            END IF;
            SELECT min(s.i) INTO broken_group
                FROM unnest(p_streams, p_kinds, p_versions) WITH ORDINALITY AS s(stream, kind, version, i)
                WHERE s.stream IS NULL OR octet_length(s.stream) NOT BETWEEN 1 AND 1024
                    OR s.kind IS NULL OR s.kind NOT BETWEEN 0 AND 3 OR s.version IS NULL OR s.version < 0;
            IF broken_group IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format('stream group %s is not valid', broken_group);
            END IF;
            IF bad IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format('event %s is not valid', bad);
            END IF;\(writtenAtCheck(w))

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
            -- The shared log's time never goes back: the server's clock, or the last instant.
            at_now := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
            IF head.head_recorded_at > at_now THEN
                at_now := head.head_recorded_at;
            END IF;

            -- A batch whose first id is stored is a retry: every id is probed. Any other batch is
            -- taken as new; should an id of it be stored after all (or twice in it), the unique index
            -- refuses the insert, which is undone, and the batch goes through the probing path.
            probe := EXISTS (SELECT FROM notes_log.events ev WHERE ev.notebook = p_notebook AND ev.event_id = p_ids[1]);
            -- A stream in several groups of the batch takes the general path too.
            distinct_streams := (SELECT count(DISTINCT s) FROM unnest(p_streams) s) = g_count;
            LOOP
                IF probe AND (SELECT count(DISTINCT x) FROM unnest(p_ids) x) <> n THEN
                    RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'an event id is missing or appears twice';
                END IF;
                IF NOT probe AND distinct_streams THEN
                    -- Every event taken as new: versions from narrow rows (the version before the
                    -- group, and the event's place in it), then the envelopes of format 1 (see
                    -- envelope_body) over the arrays zipped (one row per event, in order: no join, no
                    -- sort of the payloads). A broken expectation is not worded here: the probing path
                    -- does it (an id stored after all may explain it).
                    WITH grp AS MATERIALIZED (
                        SELECT s.g, s.stream, s.kind, s.expected,
                            CASE
                                -- No stream, or an exact version: the unique index on (notebook, stream,
                                -- version) refuses the next version if it is taken; the one expected must exist
                                -- (looked up by a scalar subquery: an EXISTS became a hashed subplan, which
                                -- read every version of the notebook).
                                WHEN s.kind = 1 OR (s.kind = 3 AND s.expected = 0) THEN 0
                                WHEN s.kind = 3 THEN CASE WHEN (SELECT ev.version FROM notes_log.events ev
                                    WHERE ev.notebook = p_notebook AND ev.stream = s.stream AND ev.version = s.expected) IS NOT NULL
                                    THEN s.expected ELSE -1 END
                                ELSE (SELECT coalesce(max(ev.version), 0) FROM notes_log.events ev
                                    WHERE ev.notebook = p_notebook AND ev.stream = s.stream)
                            END AS base
                        FROM unnest(p_streams, p_kinds, p_versions) WITH ORDINALITY AS s(stream, kind, expected, g)
                    ), x AS (
                        SELECT x.i, x.g, lag(x.g) OVER (ORDER BY x.i) IS DISTINCT FROM x.g AS first_of_group
                        FROM unnest(p_groups) WITH ORDINALITY AS x(g, i)
                    ), e AS (
                        -- Each stream in one group (checked above): a version is the one before the
                        -- group and the event's place in it.
                        SELECT x.i, x.g, x.first_of_group, grp.stream, grp.kind, grp.expected,
                            grp.base + x.i - max(CASE WHEN x.first_of_group THEN x.i END)
                                OVER (ORDER BY x.i ROWS UNBOUNDED PRECEDING) + 1 AS version
                        FROM x JOIN grp ON grp.g = x.g
                    ), v AS (
                        SELECT e.*, e.first_of_group AND (
                                e.version - 1 < 0 OR (e.kind = 1 AND e.version - 1 <> 0) OR (e.kind = 2 AND e.version - 1 = 0)
                                OR (e.kind = 3 AND e.version - 1 <> e.expected)) AS broken
                        FROM e
                    )
                    SELECT array_agg(v.i::integer ORDER BY v.i), array_agg(v.stream ORDER BY v.i),
                        array_agg(v.version ORDER BY v.i), array_agg(head.head_position + v.i ORDER BY v.i),
                        (array_agg(v.g ORDER BY v.i) FILTER (WHERE v.broken))[1],
                        (array_agg(v.version - 1 ORDER BY v.i) FILTER (WHERE v.broken))[1]
                        INTO f_o, f_stream, f_version, f_position, broken_group, broken_actual
                        FROM v;
                    IF broken_group IS NULL THEN
                        SELECT array_agg(\(format(w)) || uuid_send(v.id) || int8send(at_now)
                                || notes_log.leb128(v.version) || notes_log.leb128(v.sv)
                                || notes_log.leb128(octet_length(v.type)) || convert_to(v.type, 'UTF8')
                                || notes_log.leb128(octet_length(v.stream)) || convert_to(v.stream, 'UTF8')
                                || notes_log.leb128(octet_length(v.actor)) || convert_to(v.actor, 'UTF8')
                                || CASE WHEN v.cmd IS NULL THEN '\\x00'::bytea
                                    ELSE '\\x01'::bytea || notes_log.leb128(octet_length(v.cmd)) || convert_to(v.cmd, 'UTF8') END
                                || CASE WHEN v.caus IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || uuid_send(v.caus) END
                                || CASE WHEN v.corr IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || uuid_send(v.corr) END\(writtenAtBytes(w))
                                || notes_log.leb128(octet_length(v.payload)) || v.payload)
                            INTO f_body
                            FROM unnest(p_ids, f_version, f_stream, p_types, p_schema_versions, p_actors, p_commands,
                                p_causations, p_correlations, p_payloads\(w ? ", p_written_ats" : ""))
                                AS v(id, version, stream, type, sv, actor, cmd, caus, corr, payload\(w ? ", wa" : ""));
                    END IF;
                ELSE
                    -- Version 2's statement: (probing) every event's stored position; every new event's
                    -- stream, version (the stream's last one and the batch's new events before it),
                    -- position and envelope body of format 1 (see envelope_body); the first broken
                    -- expectation, checked at each group's first new event, as (group, actual version).
                    -- A stream's last version is looked up once per group, by its number; `versioned`
                    -- is materialized (inlined, each use of a version, 16 in leb128, would compute it
                    -- again).
                    WITH grp AS MATERIALIZED (
                        SELECT s.g, s.stream, s.kind, s.expected,
                            (SELECT coalesce(max(ev.version), 0) FROM notes_log.events ev
                                WHERE ev.notebook = p_notebook AND ev.stream = s.stream) AS base
                        FROM unnest(p_streams, p_kinds, p_versions) WITH ORDINALITY AS s(stream, kind, expected, g)
                    ), e AS (
                        SELECT x.i, x.id, x.g, grp.stream, grp.kind, grp.expected, grp.base, x.type, x.sv, x.actor, x.cmd,
                            x.caus, x.corr, x.payload,\(w ? " x.wa," : "")
                            CASE WHEN probe THEN (SELECT ev.position FROM notes_log.events ev
                                WHERE ev.notebook = p_notebook AND ev.event_id = x.id) END AS stored
                        FROM unnest(p_ids, p_groups, p_types, p_schema_versions, p_actors, p_commands, p_causations,
                            p_correlations, p_payloads\(w ? ", p_written_ats" : "")) WITH ORDINALITY AS x(id, g, type, sv, actor, cmd, caus, corr, payload, \(w ? "wa, " : "")i)
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
                    SELECT CASE WHEN probe THEN (SELECT array_agg(e.stored ORDER BY e.i) FROM e) END,
                        array_agg(v.i ORDER BY v.i), array_agg(v.stream ORDER BY v.i), array_agg(v.version ORDER BY v.i),
                        array_agg(v.position ORDER BY v.i),
                        array_agg(\(format(w)) || uuid_send(v.id) || int8send(at_now)
                            || notes_log.leb128(v.version) || notes_log.leb128(v.sv)
                            || notes_log.leb128(octet_length(v.type)) || convert_to(v.type, 'UTF8')
                            || notes_log.leb128(octet_length(v.stream)) || convert_to(v.stream, 'UTF8')
                            || notes_log.leb128(octet_length(v.actor)) || convert_to(v.actor, 'UTF8')
                            || CASE WHEN v.cmd IS NULL THEN '\\x00'::bytea
                                ELSE '\\x01'::bytea || notes_log.leb128(octet_length(v.cmd)) || convert_to(v.cmd, 'UTF8') END
                            || CASE WHEN v.caus IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || uuid_send(v.caus) END
                            || CASE WHEN v.corr IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || uuid_send(v.corr) END\(writtenAtBytes(w))
                            || notes_log.leb128(octet_length(v.payload)) || v.payload ORDER BY v.i),
                        (array_agg(v.g ORDER BY v.i) FILTER (WHERE v.broken))[1],
                        (array_agg(v.version - 1 ORDER BY v.i) FILTER (WHERE v.broken))[1]
                        INTO stored, f_o, f_stream, f_version, f_position, f_body, broken_group, broken_actual
                        FROM versioned v;
                END IF;
                IF broken_group IS NOT NULL THEN
                    -- An id stored after all would explain it: probe before refusing.
                    IF NOT probe THEN
                        probe := true;
                        CONTINUE;
                    END IF;
                    RAISE EXCEPTION USING ERRCODE = 'NLV01',
                        MESSAGE = format('stream %s is at version %s', p_streams[broken_group], broken_actual),
                        DETAIL = format('%s %s', broken_group, broken_actual);
                END IF;
                EXIT WHEN f_o IS NULL;

                chain := head.head_digest;
                digests := '{}';
                k := 0;
                FOREACH body IN ARRAY f_body LOOP
                    k := k + 1;
                    chain := sha256(chain || body);
                    digests[k] := chain;
                END LOOP;
                collided := false;
                BEGIN
                    IF probe THEN
                        INSERT INTO notes_log.events (
                            notebook, position, event_id, stream, version, type, schema_version, actor, command,
                            causation_id, correlation_id, payload, recorded_at, digest, pushed_by\(w ? ", written_at" : ""))
                        SELECT p_notebook, f.position, e.id, f.stream, f.version, e.type, e.sv, e.actor, e.cmd, e.caus,
                            e.corr, e.payload, at_now, f.digest, session_user\(w ? ", e.wa" : "")
                        FROM unnest(f_o, f_stream, f_version, f_position, digests) AS f(i, stream, version, position, digest)
                        JOIN unnest(p_ids, p_types, p_schema_versions, p_actors, p_commands, p_causations, p_correlations,
                            p_payloads\(w ? ", p_written_ats" : "")) WITH ORDINALITY AS e(id, type, sv, actor, cmd, caus, corr, payload, \(w ? "wa, " : "")i) ON e.i = f.i;
                    ELSE
                        -- Every event is new: the arrays line up one for one.
                        INSERT INTO notes_log.events (
                            notebook, position, event_id, stream, version, type, schema_version, actor, command,
                            causation_id, correlation_id, payload, recorded_at, digest, pushed_by\(w ? ", written_at" : ""))
                        SELECT p_notebook, e.position, e.id, e.stream, e.version, e.type, e.sv, e.actor, e.cmd, e.caus,
                            e.corr, e.payload, at_now, e.digest, session_user\(w ? ", e.wa" : "")
                        FROM unnest(p_ids, f_stream, f_version, f_position, p_types, p_schema_versions, p_actors, p_commands,
                            p_causations, p_correlations, p_payloads, digests\(w ? ", p_written_ats" : ""))
                            AS e(id, stream, version, position, type, sv, actor, cmd, caus, corr, payload, digest\(w ? ", wa" : ""));
                    END IF;
                EXCEPTION WHEN unique_violation THEN
                    IF probe THEN
                        RAISE;
                    END IF;
                    collided := true;
                END;
                IF collided THEN
                    probe := true;
                    CONTINUE;
                END IF;
                UPDATE notes_log.notebooks
                    SET head_position = f_position[k], head_recorded_at = at_now, head_digest = chain
                    WHERE notebook = p_notebook;
                head.head_position := f_position[k];
                head.head_recorded_at := at_now;
                head.head_digest := chain;
                EXIT;
            END LOOP;
            IF probe THEN
                RETURN QUERY
                    SELECT s.i::integer, coalesce(s.pos, f.position), s.pos IS NULL, NULL::bigint, NULL::bytea
                    FROM unnest(stored) WITH ORDINALITY AS s(pos, i)
                    LEFT JOIN unnest(f_o, f_position) AS f(i, position) ON f.i = s.i
                    ORDER BY s.i;
            ELSE
                RETURN QUERY SELECT f.i, f.position, true, NULL::bigint, NULL::bytea
                    FROM unnest(f_o, f_position) AS f(i, position);
            END IF;
            ordinal := 0; event_position := head.head_position; appended := false;
            recorded_at := head.head_recorded_at; digest := head.head_digest;
            RETURN NEXT;
        END
        $fn$;
        """
    }

    /// `restore_batch` of version 3, or of version 4 with the events' device instants (see
    /// ``appendBatch(writtenAt:)``).
    static func restoreBatch(writtenAt w: Bool) -> String {
        """
        -- Restores to a notebook whose server came back from an older backup the events a device
        -- holds as confirmed past the notebook's head: as they were (ids, positions, versions, instants,
        -- digests), checked to continue the log exactly at its head, under the notebook's lock. Refused
        -- (NLB01, naming the position) when the head is not at p_after any more, or an event does not
        -- continue it: a position, a stream version, an instant that goes back or is ahead of the
        -- server's clock, a chain digest that is not the envelope's, an id stored elsewhere. For writers
        -- of the notebook; pushed_by is the restoring role. Returns the new head.
        CREATE FUNCTION notes_log.restore_batch(
            p_notebook uuid, p_after bigint, p_ids uuid[], p_streams text[], p_versions bigint[], p_types text[],
            p_schema_versions integer[], p_actors text[], p_commands text[], p_causations uuid[], p_correlations uuid[],
            p_payloads bytea[], p_recorded_at bigint[], p_digests bytea[]\(w ? ", p_written_ats bigint[]" : "")
        ) RETURNS TABLE (head_position bigint, head_recorded_at bigint, head_digest bytea)
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
        DECLARE
            n integer := coalesce(cardinality(p_ids), 0);
            head record;
            may_write boolean;
            bad integer;
            chain bytea;
            body bytea;
            bodies bytea[];
            k integer := 0;
        BEGIN
            IF p_notebook IS NULL OR p_after IS NULL OR p_after < 0 THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'no notebook or position named';
            END IF;
            IF n = 0 OR n > 5000 THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format('a batch holds 1 to 5000 events, not %s', n);
            END IF;
            IF cardinality(p_streams) IS DISTINCT FROM n OR cardinality(p_versions) IS DISTINCT FROM n
                OR cardinality(p_types) IS DISTINCT FROM n OR cardinality(p_schema_versions) IS DISTINCT FROM n
                OR cardinality(p_actors) IS DISTINCT FROM n OR cardinality(p_commands) IS DISTINCT FROM n
                OR cardinality(p_causations) IS DISTINCT FROM n OR cardinality(p_correlations) IS DISTINCT FROM n
                OR cardinality(p_payloads) IS DISTINCT FROM n OR cardinality(p_recorded_at) IS DISTINCT FROM n
                OR cardinality(p_digests) IS DISTINCT FROM n\(arraysAgree(w))
            THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'the batch''s arrays differ in length';
            END IF;
            IF (SELECT sum(octet_length(x)) FROM unnest(p_payloads) x) > 16777216 THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'the batch holds more than 16 MiB of payload';
            END IF;
            IF (SELECT count(DISTINCT x) FROM unnest(p_ids) x) <> n OR array_position(p_ids, NULL) IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'an event id is missing or appears twice';
            END IF;
            SELECT min(e.i) INTO bad
                FROM unnest(p_streams, p_versions, p_types, p_schema_versions, p_actors, p_payloads, p_recorded_at, p_digests)
                    WITH ORDINALITY AS e(stream, version, type, sv, actor, payload, at, digest, i)
                WHERE e.stream IS NULL OR octet_length(e.stream) NOT BETWEEN 1 AND 1024 OR e.version IS NULL
                    OR e.version < 1 OR e.type IS NULL OR octet_length(e.type) NOT BETWEEN 1 AND 256 OR e.sv IS NULL
                    OR e.sv < 0 OR e.actor IS NULL OR e.payload IS NULL OR e.at IS NULL OR e.digest IS NULL
                    OR octet_length(e.digest) <> 32;
            IF bad IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format('event %s is not valid', bad);
            END IF;\(writtenAtCheck(w))

            -- A definer function bypasses row-level security: the membership is checked here.
            SELECT m.can_write INTO may_write FROM notes_log.members m
                WHERE m.notebook = p_notebook AND m.role = session_user;
            IF NOT coalesce(may_write, false) THEN
                RAISE EXCEPTION USING ERRCODE = 'NLP01', MESSAGE = format(
                    'role %I may not restore events to notebook %s: only its writers may', session_user, p_notebook);
            END IF;
            SELECT * INTO head FROM notes_log.notebooks nb WHERE nb.notebook = p_notebook FOR UPDATE;
            IF head.head_position <> p_after THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format(
                    'the remote''s head is at position %s, not %s: events were appended since', head.head_position, p_after);
            END IF;

            -- Instants: none before the head's or the one before it, none ahead of the server's clock.
            SELECT min(e.i) INTO bad
                FROM (SELECT x.i, x.at, lag(x.at) OVER (ORDER BY x.i) AS before
                    FROM unnest(p_recorded_at) WITH ORDINALITY AS x(at, i)) e
                WHERE e.at < coalesce(e.before, head.head_recorded_at, e.at)
                    OR e.at > (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
            IF bad IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format(
                    'the event for position %s has an instant before the log''s last one or ahead of the server''s clock',
                    p_after + bad);
            END IF;
            -- Versions: each the next of its stream (its last stored one, then the batch's before it).
            WITH grp AS MATERIALIZED (
                SELECT s.stream, (SELECT coalesce(max(ev.version), 0) FROM notes_log.events ev
                    WHERE ev.notebook = p_notebook AND ev.stream = s.stream) AS base
                FROM (SELECT DISTINCT x AS stream FROM unnest(p_streams) x) s
            )
            SELECT min(e.i) INTO bad
                FROM (SELECT x.i, x.version, grp.base + count(*) OVER (PARTITION BY x.stream ORDER BY x.i) AS next
                    FROM unnest(p_streams, p_versions) WITH ORDINALITY AS x(stream, version, i)
                    JOIN grp ON grp.stream = x.stream) e
                WHERE e.version <> e.next;
            IF bad IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format(
                    'the event for position %s is not its stream''s next version', p_after + bad);
            END IF;
            -- Digests: each the chain's over the envelope of format 1 (see envelope_body).
            SELECT array_agg(\(format(w)) || uuid_send(v.id) || int8send(v.at)
                    || notes_log.leb128(v.version) || notes_log.leb128(v.sv)
                    || notes_log.leb128(octet_length(v.type)) || convert_to(v.type, 'UTF8')
                    || notes_log.leb128(octet_length(v.stream)) || convert_to(v.stream, 'UTF8')
                    || notes_log.leb128(octet_length(v.actor)) || convert_to(v.actor, 'UTF8')
                    || CASE WHEN v.cmd IS NULL THEN '\\x00'::bytea
                        ELSE '\\x01'::bytea || notes_log.leb128(octet_length(v.cmd)) || convert_to(v.cmd, 'UTF8') END
                    || CASE WHEN v.caus IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || uuid_send(v.caus) END
                    || CASE WHEN v.corr IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || uuid_send(v.corr) END\(writtenAtBytes(w))
                    || notes_log.leb128(octet_length(v.payload)) || v.payload ORDER BY v.i)
                INTO bodies
                FROM unnest(p_ids, p_recorded_at, p_versions, p_schema_versions, p_types, p_streams, p_actors, p_commands,
                    p_causations, p_correlations, p_payloads\(w ? ", p_written_ats" : ""))
                    WITH ORDINALITY AS v(id, at, version, sv, type, stream, actor, cmd, caus, corr, payload, \(w ? "wa, " : "")i);
            chain := head.head_digest;
            FOREACH body IN ARRAY bodies LOOP
                k := k + 1;
                chain := sha256(chain || body);
                IF chain <> p_digests[k] THEN
                    RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format(
                        'the event for position %s does not continue the chain: its digest is not its envelope''s',
                        p_after + k);
                END IF;
            END LOOP;
            BEGIN
                INSERT INTO notes_log.events (
                    notebook, position, event_id, stream, version, type, schema_version, actor, command,
                    causation_id, correlation_id, payload, recorded_at, digest, pushed_by\(w ? ", written_at" : ""))
                SELECT p_notebook, p_after + e.i, e.id, e.stream, e.version, e.type, e.sv, e.actor, e.cmd, e.caus, e.corr,
                    e.payload, e.at, e.digest, session_user\(w ? ", e.wa" : "")
                FROM unnest(p_ids, p_streams, p_versions, p_types, p_schema_versions, p_actors, p_commands, p_causations,
                    p_correlations, p_payloads, p_recorded_at, p_digests\(w ? ", p_written_ats" : ""))
                    WITH ORDINALITY AS e(id, stream, version, type, sv, actor, cmd, caus, corr, payload, at, digest, \(w ? "wa, " : "")i);
            EXCEPTION WHEN unique_violation THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01',
                    MESSAGE = 'an event id of the batch is stored at another position of the notebook';
            END;
            UPDATE notes_log.notebooks nb
                SET head_position = p_after + n, head_recorded_at = p_recorded_at[n], head_digest = chain
                WHERE nb.notebook = p_notebook;
            head_position := p_after + n;
            head_recorded_at := p_recorded_at[n];
            head_digest := chain;
            RETURN NEXT;
        END
        $fn$;
        """
    }
}
