/// The remote log's schema in PostgreSQL, as numbered migrations.
///
/// Everything lives in the schema `notes_log`:
///
/// - `schema_version`: one row per applied migration. A program refuses a remote whose newest
///   version it does not know.
/// - `notebooks`: one head row per notebook (last position, instant and chain digest). Every
///   append takes its row lock first, so appends to one notebook are serialized and positions
///   are gap-free: a reader that sees position P has seen every position before it. (A sequence
///   would hand out numbers to transactions that commit out of order, and readers would skip the
///   late ones.)
/// - `events`: the log, unique by (notebook, position), (notebook, event_id) and (notebook,
///   stream, version). Triggers refuse UPDATE, DELETE and TRUNCATE of events, DELETE and
///   TRUNCATE of notebooks, and a head that moves back.
/// - `append_batch(...)`: the one call per pushed batch. `SECURITY DEFINER` with a fixed
///   `search_path`, its EXECUTE revoked from PUBLIC in the transaction that creates it, so roles
///   that will own nothing (devices, people) can be granted EXECUTE alone and never write the
///   tables, choose positions or instants.
/// - `envelope_body(...)`: the envelope format 1 of `EventStore` (see its `Envelope`), so the
///   remote computes the chain digest every device will hold.
///
/// That is version 1; ``version2`` adds names, members, roles and row-level security, and
/// replaces `append_batch`.
enum Schema {
    static let name = "notes_log"

    /// Creates the schema and its version table when absent: the ground every migration stands on.
    static let bootstrap = """
        CREATE SCHEMA IF NOT EXISTS notes_log;
        CREATE TABLE IF NOT EXISTS notes_log.schema_version (
            version integer PRIMARY KEY CHECK (version > 0),
            applied_at timestamptz NOT NULL DEFAULT now(),
            applied_by name NOT NULL DEFAULT session_user
        );
        """

    /// Migration `i` brings the schema from version `i` to `i + 1`.
    static let migrations = [version1, version2, version3, version4, version5]

    static let version1 = """
        CREATE TABLE notes_log.notebooks (
            notebook uuid PRIMARY KEY,
            head_position bigint NOT NULL DEFAULT 0 CHECK (head_position >= 0),
            head_recorded_at bigint,
            head_digest bytea NOT NULL DEFAULT decode(repeat('00', 32), 'hex') CHECK (octet_length(head_digest) = 32),
            created_at timestamptz NOT NULL DEFAULT now()
        );

        CREATE TABLE notes_log.events (
            notebook uuid NOT NULL REFERENCES notes_log.notebooks,
            position bigint NOT NULL CHECK (position > 0),
            event_id uuid NOT NULL,
            stream text NOT NULL CHECK (octet_length(stream) BETWEEN 1 AND 1024),
            version bigint NOT NULL CHECK (version > 0),
            type text NOT NULL CHECK (octet_length(type) BETWEEN 1 AND 256),
            schema_version integer NOT NULL CHECK (schema_version >= 0),
            actor text NOT NULL,
            command text,
            causation_id uuid,
            correlation_id uuid,
            payload bytea NOT NULL,
            recorded_at bigint NOT NULL,
            digest bytea NOT NULL CHECK (octet_length(digest) = 32),
            pushed_by name NOT NULL DEFAULT session_user,
            PRIMARY KEY (notebook, position),
            UNIQUE (notebook, event_id),
            UNIQUE (notebook, stream, version)
        );

        CREATE FUNCTION notes_log.refuse_change() RETURNS trigger
        LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
        BEGIN
            RAISE EXCEPTION USING ERRCODE = 'NLA01',
                MESSAGE = format('the notes log is append-only: %s of %s is refused', TG_OP, TG_TABLE_NAME);
        END
        $fn$;

        -- A head only moves forward, and stays with its notebook.
        CREATE FUNCTION notes_log.refuse_head_rewind() RETURNS trigger
        LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
        BEGIN
            IF NEW.notebook <> OLD.notebook OR NEW.head_position < OLD.head_position
                OR NEW.head_recorded_at < OLD.head_recorded_at
                OR (NEW.head_position = OLD.head_position AND NEW.head_digest <> OLD.head_digest)
            THEN
                RAISE EXCEPTION USING ERRCODE = 'NLA01',
                    MESSAGE = 'the notes log is append-only: a notebook''s head cannot move back or change its past';
            END IF;
            RETURN NEW;
        END
        $fn$;

        CREATE TRIGGER notebooks_forward_only BEFORE UPDATE ON notes_log.notebooks
            FOR EACH ROW EXECUTE FUNCTION notes_log.refuse_head_rewind();
        CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON notes_log.events
            FOR EACH ROW EXECUTE FUNCTION notes_log.refuse_change();
        CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON notes_log.events
            FOR EACH STATEMENT EXECUTE FUNCTION notes_log.refuse_change();
        CREATE TRIGGER notebooks_kept BEFORE DELETE ON notes_log.notebooks
            FOR EACH ROW EXECUTE FUNCTION notes_log.refuse_change();
        CREATE TRIGGER notebooks_no_truncate BEFORE TRUNCATE ON notes_log.notebooks
            FOR EACH STATEMENT EXECUTE FUNCTION notes_log.refuse_change();

        -- LEB128 of a non-negative integer, as EventStore's ByteWriter writes varints.
        CREATE FUNCTION notes_log.varint(v bigint) RETURNS bytea
        LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $fn$
        DECLARE
            out bytea := ''::bytea;
        BEGIN
            IF v < 0 THEN
                RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = 'a negative number cannot be a varint';
            END IF;
            LOOP
                IF v < 128 THEN
                    RETURN out || set_byte('\\x00'::bytea, 0, v::integer);
                END IF;
                out := out || set_byte('\\x00'::bytea, 0, ((v & 127) | 128)::integer);
                v := v >> 7;
            END LOOP;
        END
        $fn$;

        -- A varint length and the UTF-8 bytes (the database's encoding is UTF8: checked at init).
        CREATE FUNCTION notes_log.string_bytes(s text) RETURNS bytea
        LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp
        RETURN notes_log.varint(octet_length(s)) || convert_to(s, 'UTF8');

        -- The body of an EventStore envelope of format 1, the bytes its chain digest covers:
        -- format | id | recordedAt (8 bytes, big-endian) | varint version | varint schema version
        -- | type | stream | actor | optional command | optional causation | optional correlation
        -- | payload (strings and payload: varint length then bytes; optionals: a 0 or 1 byte first).
        CREATE FUNCTION notes_log.envelope_body(
            p_id uuid, p_recorded_at bigint, p_version bigint, p_schema_version integer, p_type text,
            p_stream text, p_actor text, p_command text, p_causation uuid, p_correlation uuid, p_payload bytea
        ) RETURNS bytea
        LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp
        RETURN '\\x01'::bytea || uuid_send(p_id) || int8send(p_recorded_at)
            || notes_log.varint(p_version) || notes_log.varint(p_schema_version)
            || notes_log.string_bytes(p_type) || notes_log.string_bytes(p_stream) || notes_log.string_bytes(p_actor)
            || CASE WHEN p_command IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || notes_log.string_bytes(p_command) END
            || CASE WHEN p_causation IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || uuid_send(p_causation) END
            || CASE WHEN p_correlation IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || uuid_send(p_correlation) END
            || notes_log.varint(octet_length(p_payload)) || p_payload;

        -- Appends one batch to a notebook. Streams come as groups (stream, expected kind, expected
        -- version; kinds: 0 any, 1 no stream, 2 stream exists, 3 exact version), events in group
        -- order with their group's 1-based index. Returns one row per event (ordinal, position,
        -- appended) and a last row of ordinal 0: the head's position, instant and digest.
        -- An id the notebook holds answers its position and writes nothing; a broken expectation
        -- raises NLV01 (detail: "group actual-version") and writes nothing.
        CREATE FUNCTION notes_log.append_batch(
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
            pos bigint;
            chain bytea;
            existing bigint;
            g integer := 0;
            current_version bigint;
            wrote boolean := false;
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
            FOR i IN 1..g_count LOOP
                IF p_streams[i] IS NULL OR octet_length(p_streams[i]) NOT BETWEEN 1 AND 1024
                    OR p_kinds[i] IS NULL OR p_kinds[i] NOT BETWEEN 0 AND 3
                    OR p_versions[i] IS NULL OR p_versions[i] < 0
                THEN
                    RAISE EXCEPTION USING ERRCODE = 'NLB01',
                        MESSAGE = format('stream group %s is not valid', i);
                END IF;
            END LOOP;
            FOR i IN 1..n LOOP
                IF p_groups[i] IS NULL OR p_groups[i] < greatest(g, 1) OR p_groups[i] > g_count
                    OR p_types[i] IS NULL OR octet_length(p_types[i]) NOT BETWEEN 1 AND 256
                    OR p_schema_versions[i] IS NULL OR p_schema_versions[i] < 0
                    OR p_actors[i] IS NULL OR p_payloads[i] IS NULL
                THEN
                    RAISE EXCEPTION USING ERRCODE = 'NLB01', MESSAGE = format('event %s is not valid', i);
                END IF;
                g := p_groups[i];
            END LOOP;

            INSERT INTO notes_log.notebooks (notebook) VALUES (p_notebook) ON CONFLICT DO NOTHING;
            SELECT * INTO head FROM notes_log.notebooks WHERE notebook = p_notebook FOR UPDATE;
            pos := head.head_position;
            chain := head.head_digest;
            -- The shared log's time never goes back: the server's clock, or the last instant.
            at_now := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
            IF head.head_recorded_at > at_now THEN
                at_now := head.head_recorded_at;
            END IF;

            g := 0;
            FOR i IN 1..n LOOP
                SELECT e.position INTO existing FROM notes_log.events e
                    WHERE e.notebook = p_notebook AND e.event_id = p_ids[i];
                IF FOUND THEN
                    ordinal := i; event_position := existing; appended := false;
                    recorded_at := NULL; digest := NULL;
                    RETURN NEXT;
                    CONTINUE;
                END IF;
                IF p_groups[i] <> g THEN
                    g := p_groups[i];
                    SELECT coalesce(max(e.version), 0) INTO current_version FROM notes_log.events e
                        WHERE e.notebook = p_notebook AND e.stream = p_streams[g];
                    IF (p_kinds[g] = 1 AND current_version <> 0) OR (p_kinds[g] = 2 AND current_version = 0)
                        OR (p_kinds[g] = 3 AND current_version <> p_versions[g])
                    THEN
                        RAISE EXCEPTION USING ERRCODE = 'NLV01',
                            MESSAGE = format('stream %s is at version %s', p_streams[g], current_version),
                            DETAIL = format('%s %s', g, current_version);
                    END IF;
                END IF;
                current_version := current_version + 1;
                pos := pos + 1;
                chain := sha256(chain || notes_log.envelope_body(
                    p_ids[i], at_now, current_version, p_schema_versions[i], p_types[i], p_streams[g], p_actors[i],
                    p_commands[i], p_causations[i], p_correlations[i], p_payloads[i]));
                INSERT INTO notes_log.events (
                    notebook, position, event_id, stream, version, type, schema_version, actor, command,
                    causation_id, correlation_id, payload, recorded_at, digest)
                VALUES (
                    p_notebook, pos, p_ids[i], p_streams[g], current_version, p_types[i], p_schema_versions[i],
                    p_actors[i], p_commands[i], p_causations[i], p_correlations[i], p_payloads[i], at_now, chain);
                wrote := true;
                ordinal := i; event_position := pos; appended := true; recorded_at := NULL; digest := NULL;
                RETURN NEXT;
            END LOOP;

            IF wrote THEN
                UPDATE notes_log.notebooks
                    SET head_position = pos, head_recorded_at = at_now, head_digest = chain
                    WHERE notebook = p_notebook;
                head.head_recorded_at := at_now;
            END IF;
            ordinal := 0; event_position := pos; appended := false;
            recorded_at := head.head_recorded_at; digest := chain;
            RETURN NEXT;
        END
        $fn$;

        REVOKE ALL ON FUNCTION notes_log.append_batch(
            uuid, text[], smallint[], bigint[], integer[], uuid[], text[], integer[], text[], text[], uuid[], uuid[],
            bytea[]) FROM PUBLIC;
        REVOKE ALL ON FUNCTION notes_log.refuse_change() FROM PUBLIC;
        REVOKE ALL ON FUNCTION notes_log.refuse_head_rewind() FROM PUBLIC;
        REVOKE ALL ON FUNCTION notes_log.varint(bigint) FROM PUBLIC;
        REVOKE ALL ON FUNCTION notes_log.string_bytes(text) FROM PUBLIC;
        REVOKE ALL ON FUNCTION notes_log.envelope_body(
            uuid, bigint, bigint, integer, text, text, text, text, uuid, uuid, bytea) FROM PUBLIC;
        """

    /// The NOLOGIN role that owns the tables and functions (created by init when absent).
    static let ownerRole = "notes_log_owner"
    /// The NOLOGIN role that holds what a device needs: USAGE on the schema, SELECT on the tables
    /// (through row-level security), EXECUTE on the functions.
    static let userRole = "notes_log_user"
    /// The NOLOGIN role whose members may create notebooks (itself a member of ``userRole``).
    static let creatorRole = "notes_log_creator"
}
