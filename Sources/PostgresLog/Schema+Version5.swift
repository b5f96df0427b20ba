extension Schema {
    /// Version 5: `append_batch` for the batches devices send, faster; its arguments and answer
    /// change, every check and refusal stays.
    ///
    /// - Events come in group order and each group says how many it holds (`p_counts`) instead of
    ///   each event naming its group (`p_groups`): the counts add up to the batch or it is refused.
    /// - The answer is one row: `stored` (NULL when every event was appended, else each event's
    ///   stored position, NULL for the ones appended now), `first_position` (the first event
    ///   appended now; the others follow in batch order) and the head. No row per event.
    /// - A batch whose first id is not stored, from a writer, with valid groups, is taken as new
    ///   in one pass without probing ids or sorting events, also when a stream comes in several
    ///   groups (what a device's outbox sends: one group per run of a note's events): the version
    ///   before a stream's first group is 0 for no stream, the expected one for an exact version
    ///   (looked up by equality: it must be stored), else the stream's last one; before its later
    ///   groups, that and the batch's events of the stream before them (one sort of the groups, not
    ///   of the events; a stream whose first group expects any version or an existing stream and
    ///   that comes again takes the probing path). The unique indexes refuse an id stored or given twice and a version taken,
    ///   the columns' checks an invalid event; any of those, or a broken expectation, undoes the
    ///   pass (a subtransaction) and the batch goes through the probing path, version 4's, which
    ///   checks, probes and words the refusal as before.
    /// - The envelopes' strings are the text's own bytes (`textsend`) when the client's encoding is
    ///   the database's (UTF8: no conversion), `convert_to` otherwise.
    /// - `restore_batch` is unchanged; version 4's `append_batch` is dropped (a program that knows
    ///   only version 4 refuses a version 5 remote).
    static let version5 = """
        DROP FUNCTION \(appendBatchSignature);

        -- Appends one batch to a notebook of which the session's role is a writer. Streams come as
        -- groups (stream, expected kind, expected version, count of events; kinds: 0 any, 1 no stream,
        -- 2 stream exists, 3 exact version), events in group order. Answers one row: `stored` (NULL
        -- when every event was appended, else each event's stored position, NULL for the ones appended
        -- now), `first_position` (of the first event appended now, the others following in batch
        -- order), and the head's position, instant and digest. An id the notebook holds answers its
        -- position and writes nothing; a broken expectation (checked at each group's first new event,
        -- after the batch's earlier events of the stream) raises NLV01 (detail: "group actual-version")
        -- and writes nothing. Arrays are unnested in select lists (one row at a time, where a FROM
        -- unnest keeps every row in a tuplestore first).
        CREATE FUNCTION notes_log.append_batch(
            p_notebook uuid, p_streams text[], p_kinds smallint[], p_versions bigint[], p_counts integer[],
            p_ids uuid[], p_types text[], p_schema_versions integer[], p_actors text[], p_commands text[],
            p_causations uuid[], p_correlations uuid[], p_payloads bytea[], p_written_ats bigint[],
            OUT stored bigint[], OUT first_position bigint, OUT head_position bigint, OUT head_recorded_at bigint,
            OUT head_digest bytea)
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
        DECLARE
            n integer := coalesce(cardinality(p_ids), 0);
            g_count integer := coalesce(cardinality(p_streams), 0);
            me name := session_user;
            -- textsend converts to the client's encoding: none when it is the database's (UTF8).
            utf8 boolean := current_setting('client_encoding') = 'UTF8';
            head record;
            at_now bigint;
            chain bytea;
            bad integer;
            counted bigint;
            missing_id boolean;
            payload_bytes bigint;
            may_write boolean;
            appended boolean := false;
            p_groups integer[];
            befores bigint[];
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
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format('a batch holds 1 to 5000 events, not %s', n);
            END IF;
            IF g_count = 0 OR cardinality(p_kinds) IS DISTINCT FROM g_count
                OR cardinality(p_versions) IS DISTINCT FROM g_count OR cardinality(p_counts) IS DISTINCT FROM g_count
                OR cardinality(p_types) IS DISTINCT FROM n
                OR cardinality(p_schema_versions) IS DISTINCT FROM n OR cardinality(p_actors) IS DISTINCT FROM n
                OR cardinality(p_commands) IS DISTINCT FROM n OR cardinality(p_causations) IS DISTINCT FROM n
                OR cardinality(p_correlations) IS DISTINCT FROM n OR cardinality(p_payloads) IS DISTINCT FROM n
                OR cardinality(p_written_ats) IS DISTINCT FROM n
            THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'the batch''s arrays differ in length';
            END IF;
            -- Each group's count of events, the counts adding up to the batch (events come in group order).
            SELECT bool_or(x.count IS NULL OR x.count < 0), sum(x.count) INTO missing_id, counted
                FROM (SELECT unnest(p_counts) AS count) x;
            IF missing_id OR counted <> n THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01',
                    MESSAGE = format('the groups'' counts of events do not add up to the batch''s %s events', n);
            END IF;
            SELECT sum(octet_length(x.payload)) INTO payload_bytes FROM (SELECT unnest(p_payloads) AS payload) x;
            IF payload_bytes > 16777216 THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'the batch holds more than 16 MiB of payload';
            END IF;
            -- The first invalid group, refused below, after the checks that come before it.
            SELECT min(s.g) INTO broken_group
                FROM (SELECT unnest(p_streams) AS stream, unnest(p_kinds) AS kind, unnest(p_versions) AS version,
                    generate_series(1, g_count) AS g) s
                WHERE s.stream IS NULL OR octet_length(s.stream) NOT BETWEEN 1 AND 1024
                    OR s.kind IS NULL OR s.kind NOT BETWEEN 0 AND 3 OR s.version IS NULL OR s.version < 0;

            -- A definer function bypasses row-level security: the membership is checked here (a refusal is
            -- worded below, after the events' checks).
            SELECT m.can_write INTO may_write FROM notes_log.members m WHERE m.notebook = p_notebook AND m.role = me;
            IF coalesce(may_write, false) AND broken_group IS NULL THEN
                SELECT * INTO head FROM notes_log.notebooks nb WHERE nb.notebook = p_notebook FOR UPDATE;
                -- The shared log's time never goes back: the server's clock, or the last instant.
                at_now := greatest((extract(epoch FROM clock_timestamp()) * 1000000)::bigint, head.head_recorded_at);
                -- A batch whose first id is stored is a retry: it goes to the probing path below.
                IF NOT EXISTS (SELECT FROM notes_log.events ev WHERE ev.notebook = p_notebook AND ev.event_id = p_ids[1]) THEN
                    BEGIN
                        -- Every event taken as new. The version before each group: for a stream's first group, 0
                        -- when it expects no stream (the unique index on (notebook, stream, version) refuses version 1
                        -- if the stream exists), the exact version expected when that version is stored (the index
                        -- refuses the next one if it is taken), else the stream's last version; for its later groups,
                        -- that and the batch's events of the stream before (when the first group expects no stream or
                        -- an exact version; else NULL: the probing path). A broken expectation, an id stored (or
                        -- twice in the batch) or an invalid event (a column's check, leb128's refusal) sends the
                        -- batch to the probing path, which words the refusal. (OFFSET 0 keeps `v` a subquery:
                        -- inlined, each use of `before` would compute it again, the probe of the version expected
                        -- four times.)
                        SELECT array_agg(v.before ORDER BY v.g), min(v.g) FILTER (WHERE v.before IS NULL OR v.before < 0
                                OR (v.kind = 1 AND v.before <> 0) OR (v.kind = 2 AND v.before = 0)
                                OR (v.kind = 3 AND v.before <> v.expected))
                            INTO befores, broken_group
                            FROM (SELECT s.g, s.kind, s.expected, CASE
                                    WHEN s.earlier IS NULL THEN CASE
                                        WHEN s.kind = 1 OR (s.kind = 3 AND s.expected = 0) THEN 0
                                        WHEN s.kind = 3 THEN CASE WHEN (SELECT ev.version FROM notes_log.events ev
                                            WHERE ev.notebook = p_notebook AND ev.stream = s.stream AND ev.version = s.expected)
                                            IS NOT NULL THEN s.expected ELSE -1 END
                                        ELSE (SELECT coalesce(max(ev.version), 0) FROM notes_log.events ev
                                            WHERE ev.notebook = p_notebook AND ev.stream = s.stream)
                                    END
                                    WHEN s.first_kind = 1 OR (s.first_kind = 3 AND s.first_expected = 0) THEN s.earlier
                                    WHEN s.first_kind = 3 THEN s.first_expected + s.earlier
                                END AS before
                                FROM (SELECT s.*, sum(s.count) OVER w AS earlier, first_value(s.kind) OVER w AS first_kind,
                                        first_value(s.expected) OVER w AS first_expected
                                    FROM (SELECT unnest(p_streams) AS stream, unnest(p_kinds) AS kind,
                                        unnest(p_versions) AS expected, unnest(p_counts) AS count,
                                        generate_series(1, g_count) AS g) s
                                    WINDOW w AS (PARTITION BY s.stream ORDER BY s.g
                                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) s OFFSET 0) v;
                        IF broken_group IS NULL THEN
                            SELECT array_agg(x.stream), array_agg(x.version) INTO f_stream, f_version
                                FROM (SELECT g.stream, g.before + generate_series(1, g.count) AS version
                                    FROM (SELECT unnest(p_streams) AS stream, unnest(befores) AS before,
                                        unnest(p_counts) AS count) g) x;
                            SELECT array_agg(CASE WHEN v.wa IS NULL THEN '\\x01'::bytea ELSE '\\x02'::bytea END
                                    || uuid_send(v.id) || int8send(at_now)
                                    || notes_log.leb128(v.version) || notes_log.leb128(v.sv)
                                    || notes_log.leb128(octet_length(v.type)) || \(utf8Bytes("v.type"))
                                    || notes_log.leb128(octet_length(v.stream)) || \(utf8Bytes("v.stream"))
                                    || notes_log.leb128(octet_length(v.actor)) || \(utf8Bytes("v.actor"))
                                    || CASE WHEN v.cmd IS NULL THEN '\\x00'::bytea
                                        ELSE '\\x01'::bytea || notes_log.leb128(octet_length(v.cmd)) || \(utf8Bytes("v.cmd")) END
                                    || CASE WHEN v.caus IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || uuid_send(v.caus) END
                                    || CASE WHEN v.corr IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || uuid_send(v.corr) END
                                    || coalesce(int8send(v.wa), ''::bytea)
                                    || notes_log.leb128(octet_length(v.payload)) || v.payload)
                                INTO f_body
                                FROM (SELECT unnest(p_ids) AS id, unnest(f_version) AS version, unnest(f_stream) AS stream,
                                    unnest(p_types) AS type, unnest(p_schema_versions) AS sv, unnest(p_actors) AS actor,
                                    unnest(p_commands) AS cmd, unnest(p_causations) AS caus, unnest(p_correlations) AS corr,
                                    unnest(p_payloads) AS payload, unnest(p_written_ats) AS wa) v;
                            chain := head.head_digest;
                            digests := '{}';
                            k := 0;
                            FOREACH body IN ARRAY f_body LOOP
                                k := k + 1;
                                chain := sha256(chain || body);
                                digests[k] := chain;
                            END LOOP;
                            INSERT INTO notes_log.events (
                                notebook, position, event_id, stream, version, type, schema_version, actor, command,
                                causation_id, correlation_id, payload, recorded_at, digest, pushed_by, written_at)
                            SELECT p_notebook, head.head_position + e.i, e.id, e.stream, e.version, e.type, e.sv, e.actor,
                                e.cmd, e.caus, e.corr, e.payload, at_now, e.digest, me, e.wa
                            FROM (SELECT generate_series(1, n) AS i, unnest(p_ids) AS id, unnest(f_stream) AS stream,
                                unnest(f_version) AS version, unnest(p_types) AS type, unnest(p_schema_versions) AS sv,
                                unnest(p_actors) AS actor, unnest(p_commands) AS cmd, unnest(p_causations) AS caus,
                                unnest(p_correlations) AS corr, unnest(p_payloads) AS payload, unnest(digests) AS digest,
                                unnest(p_written_ats) AS wa) e;
                            appended := true;
                        END IF;
                    EXCEPTION WHEN unique_violation OR check_violation OR not_null_violation OR SQLSTATE 'NLB01' THEN
                        appended := false;
                    END;
                    IF appended THEN
                        UPDATE notes_log.notebooks SET head_position = head.head_position + n, head_recorded_at = at_now,
                            head_digest = chain WHERE notebook = p_notebook;
                        stored := NULL;
                        first_position := head.head_position + 1;
                        head_position := head.head_position + n;
                        head_recorded_at := at_now;
                        head_digest := chain;
                        RETURN;
                    END IF;
                END IF;
            END IF;

            -- The probing path: every check worded, every id probed.
            SELECT bool_or(x.id IS NULL),
                min(x.i) FILTER (WHERE x.type IS NULL OR octet_length(x.type) NOT BETWEEN 1 AND 256
                    OR x.sv IS NULL OR x.sv < 0 OR x.actor IS NULL OR x.payload IS NULL)
                INTO missing_id, bad
                FROM (SELECT unnest(p_ids) AS id, unnest(p_types) AS type, unnest(p_schema_versions) AS sv,
                    unnest(p_actors) AS actor, unnest(p_payloads) AS payload, generate_series(1, n) AS i) x;
            IF missing_id THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'an event id is missing or appears twice';
            END IF;
            SELECT min(s.g) INTO broken_group
                FROM (SELECT unnest(p_streams) AS stream, unnest(p_kinds) AS kind, unnest(p_versions) AS version,
                    generate_series(1, g_count) AS g) s
                WHERE s.stream IS NULL OR octet_length(s.stream) NOT BETWEEN 1 AND 1024
                    OR s.kind IS NULL OR s.kind NOT BETWEEN 0 AND 3 OR s.version IS NULL OR s.version < 0;
            IF broken_group IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format('stream group %s is not valid', broken_group);
            END IF;
            IF bad IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format('event %s is not valid', bad);
            END IF;
            SELECT min(x.i) INTO bad FROM unnest(p_written_ats) WITH ORDINALITY AS x(at, i)
                WHERE x.at NOT BETWEEN \(writtenAtBounds.lowerBound) AND \(writtenAtBounds.upperBound);
            IF bad IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format('event %s has a written-at instant out of range', bad);
            END IF;
            IF NOT coalesce(may_write, false) THEN
                SELECT * INTO head FROM notes_log.notebooks nb WHERE nb.notebook = p_notebook;
                IF NOT FOUND THEN
                    RAISE EXCEPTION USING ERRCODE = 'NLP01', MESSAGE = format(
                        'there is no notebook %s on the remote (role %I): notebooks are created by name', p_notebook, me);
                ELSIF may_write IS NULL THEN
                    RAISE EXCEPTION USING ERRCODE = 'NLP01', MESSAGE = format(
                        'role %I is not a member of notebook %s: a writer of it runs notes_log.share', me, p_notebook);
                END IF;
                RAISE EXCEPTION USING ERRCODE = 'NLP01', MESSAGE = format(
                    'role %I may read notebook %L but not append to it: a writer shares it with can_write', me, head.name);
            END IF;
            IF (SELECT count(DISTINCT x) FROM unnest(p_ids) x) <> n THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'an event id is missing or appears twice';
            END IF;
            SELECT array_agg(x.g) INTO p_groups
                FROM (SELECT g.g, generate_series(1, g.count) FROM (SELECT generate_series(1, g_count) AS g,
                    unnest(p_counts) AS count) g) x;
            SELECT * INTO head FROM notes_log.notebooks nb WHERE nb.notebook = p_notebook FOR UPDATE;
            at_now := greatest((extract(epoch FROM clock_timestamp()) * 1000000)::bigint, head.head_recorded_at);
            -- Version 2's statement: every event's stored position; every new event's stream, version (the
            -- stream's last one and the batch's new events before it), position and envelope body; the
            -- first broken expectation, checked at each group's first new event, as (group, actual version).
            WITH grp AS MATERIALIZED (
                SELECT s.g, s.stream, s.kind, s.expected,
                    (SELECT coalesce(max(ev.version), 0) FROM notes_log.events ev
                        WHERE ev.notebook = p_notebook AND ev.stream = s.stream) AS base
                FROM unnest(p_streams, p_kinds, p_versions) WITH ORDINALITY AS s(stream, kind, expected, g)
            ), e AS (
                SELECT x.i, x.id, x.g, grp.stream, grp.kind, grp.expected, grp.base, x.type, x.sv, x.actor, x.cmd,
                    x.caus, x.corr, x.payload, x.wa,
                    (SELECT ev.position FROM notes_log.events ev WHERE ev.notebook = p_notebook AND ev.event_id = x.id)
                        AS stored
                FROM unnest(p_ids, p_groups, p_types, p_schema_versions, p_actors, p_commands, p_causations,
                    p_correlations, p_payloads, p_written_ats)
                    WITH ORDINALITY AS x(id, g, type, sv, actor, cmd, caus, corr, payload, wa, i)
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
                array_agg(CASE WHEN v.wa IS NULL THEN '\\x01'::bytea ELSE '\\x02'::bytea END
                                    || uuid_send(v.id) || int8send(at_now)
                                    || notes_log.leb128(v.version) || notes_log.leb128(v.sv)
                                    || notes_log.leb128(octet_length(v.type)) || convert_to(v.type, 'UTF8')
                                    || notes_log.leb128(octet_length(v.stream)) || convert_to(v.stream, 'UTF8')
                                    || notes_log.leb128(octet_length(v.actor)) || convert_to(v.actor, 'UTF8')
                                    || CASE WHEN v.cmd IS NULL THEN '\\x00'::bytea
                                        ELSE '\\x01'::bytea || notes_log.leb128(octet_length(v.cmd)) || convert_to(v.cmd, 'UTF8') END
                                    || CASE WHEN v.caus IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || uuid_send(v.caus) END
                                    || CASE WHEN v.corr IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || uuid_send(v.corr) END
                                    || coalesce(int8send(v.wa), ''::bytea)
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
            first_position := head.head_position + 1;
            IF f_o IS NOT NULL THEN
                chain := head.head_digest;
                digests := '{}';
                k := 0;
                FOREACH body IN ARRAY f_body LOOP
                    k := k + 1;
                    chain := sha256(chain || body);
                    digests[k] := chain;
                END LOOP;
                INSERT INTO notes_log.events (
                    notebook, position, event_id, stream, version, type, schema_version, actor, command,
                    causation_id, correlation_id, payload, recorded_at, digest, pushed_by, written_at)
                SELECT p_notebook, f.position, e.id, f.stream, f.version, e.type, e.sv, e.actor, e.cmd, e.caus,
                    e.corr, e.payload, at_now, f.digest, me, e.wa
                FROM unnest(f_o, f_stream, f_version, f_position, digests) AS f(i, stream, version, position, digest)
                JOIN unnest(p_ids, p_types, p_schema_versions, p_actors, p_commands, p_causations, p_correlations,
                    p_payloads, p_written_ats) WITH ORDINALITY AS e(id, type, sv, actor, cmd, caus, corr, payload, wa, i)
                    ON e.i = f.i;
                UPDATE notes_log.notebooks SET head_position = f_position[k], head_recorded_at = at_now, head_digest = chain
                    WHERE notebook = p_notebook;
                head.head_position := f_position[k];
                head.head_recorded_at := at_now;
                head.head_digest := chain;
            END IF;
            head_position := head.head_position;
            head_recorded_at := head.head_recorded_at;
            head_digest := head.head_digest;
        END
        $fn$;

        REVOKE ALL ON FUNCTION \(appendBatch5Signature) FROM PUBLIC;
        ALTER FUNCTION \(appendBatch5Signature) OWNER TO notes_log_owner;
        GRANT EXECUTE ON FUNCTION \(appendBatch5Signature) TO notes_log_user;
        """

    static let appendBatch5Signature = """
        notes_log.append_batch(uuid, text[], smallint[], bigint[], integer[], uuid[], text[], integer[], text[], text[],
            uuid[], uuid[], bytea[], bigint[])
        """

    /// The UTF-8 bytes of the text `value` in an envelope: `textsend` when the session's `utf8`
    /// (the client's encoding is UTF8, the database's: it converts nothing), else `convert_to`.
    static func utf8Bytes(_ value: String) -> String {
        "CASE WHEN utf8 THEN textsend(\(value)) ELSE convert_to(\(value), 'UTF8') END"
    }
}
