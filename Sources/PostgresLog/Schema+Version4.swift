import EventStore

extension Schema {
    /// Version 4: the device's own instant of an event (`EventMetadata.writtenAt`).
    ///
    /// - `events.written_at`: the instant the device that wrote an event claims for it, NULL for
    ///   events without one (every event stored before). Only shown, never used for ordering: the
    ///   remote's `recorded_at` stays the one order of time. Years 1 to 9999 (what RFC 3339
    ///   writes), checked by the functions and by the column.
    /// - `append_batch` and `restore_batch` take one more array, `p_written_ats` (an instant or
    ///   NULL per event), and compute the chain digest of an event that has one over the envelope
    ///   of format 2 (format 1 with the instant, 8 bytes big-endian, after the correlation id);
    ///   every other event keeps format 1, so digests stored before are unchanged. The functions of
    ///   version 3 are dropped (a program that knows only version 3 refuses a version 4 remote).
    static let version4 = """
        ALTER TABLE notes_log.events ADD COLUMN written_at bigint
            CHECK (written_at BETWEEN \(writtenAtBounds.lowerBound) AND \(writtenAtBounds.upperBound));

        DROP FUNCTION notes_log.append_batch(uuid, text[], smallint[], bigint[], integer[], uuid[], text[], integer[],
            text[], text[], uuid[], uuid[], bytea[]);
        DROP FUNCTION notes_log.restore_batch(uuid, bigint, uuid[], text[], bigint[], text[], integer[], text[], text[],
            uuid[], uuid[], bytea[], bigint[], bytea[]);

        \(appendBatch(writtenAt: true))
        REVOKE ALL ON FUNCTION \(appendBatchSignature) FROM PUBLIC;
        ALTER FUNCTION \(appendBatchSignature) OWNER TO notes_log_owner;
        GRANT EXECUTE ON FUNCTION \(appendBatchSignature) TO notes_log_user;

        \(restoreBatch(writtenAt: true))
        REVOKE ALL ON FUNCTION \(restoreBatchSignature) FROM PUBLIC;
        ALTER FUNCTION \(restoreBatchSignature) OWNER TO notes_log_owner;
        GRANT EXECUTE ON FUNCTION \(restoreBatchSignature) TO notes_log_user;
        """

    /// The instants a device may claim (``EventMetadata/writtenAtRange``).
    static let writtenAtBounds = EventMetadata.writtenAtRange

    static let appendBatchSignature = """
        notes_log.append_batch(uuid, text[], smallint[], bigint[], integer[], uuid[], text[], integer[], text[], text[],
            uuid[], uuid[], bytea[], bigint[])
        """

    static let restoreBatchSignature = """
        notes_log.restore_batch(uuid, bigint, uuid[], text[], bigint[], text[], integer[], text[], text[], uuid[],
            uuid[], bytea[], bigint[], bytea[], bigint[])
        """

    // Fragments of `append_batch` and `restore_batch` that differ between versions 3 and 4
    // (`w`: version 4, with the device instants); each envelope is built over rows aliased `v`,
    // whose device instant is `wa`.

    /// The envelope's format byte: 1, or 2 for an event with a device instant.
    static func format(_ w: Bool) -> String {
        w ? "CASE WHEN v.wa IS NULL THEN '\\x01'::bytea ELSE '\\x02'::bytea END" : "'\\x01'::bytea"
    }

    /// The device instant's bytes in the envelope (after the correlation id): none without one.
    static func writtenAtBytes(_ w: Bool) -> String {
        w ? "\n                            || coalesce(int8send(v.wa), ''::bytea)" : ""
    }

    /// The check that the device instants come one per event.
    static func arraysAgree(_ w: Bool) -> String {
        w ? "\n                OR cardinality(p_written_ats) IS DISTINCT FROM n" : ""
    }

    /// The refusal of a device instant outside ``writtenAtBounds``, naming the event.
    static func writtenAtCheck(_ w: Bool) -> String {
        guard w else { return "" }
        return """

                -- A device's own instant is only shown, never ordered by; one RFC 3339 writes, or NULL.
                SELECT min(x.i) INTO bad FROM unnest(p_written_ats) WITH ORDINALITY AS x(at, i)
                    WHERE x.at NOT BETWEEN \(writtenAtBounds.lowerBound) AND \(writtenAtBounds.upperBound);
                IF bad IS NOT NULL THEN
                    RAISE EXCEPTION USING ERRCODE = 'NLB01',
                        MESSAGE = format('event %s has a written-at instant out of range', bad);
                END IF;
            """
    }
}
