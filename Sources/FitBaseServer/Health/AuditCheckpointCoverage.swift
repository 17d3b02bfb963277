import Foundation
import SQLKit

/// Whether the checkpoints are where the schedule puts them: `fitbase audit verify` warns (exit status 3) when
/// `audit_checkpoints` lacks checkpoints the sink holds, or when the newest checkpoint is older than the schedule allows.
///
/// "Older than the schedule allows" is read from the log itself, not from the clock: a running server writes audit
/// entries and a checkpoint every period, so entries written more than two periods after the newest checkpoint mean
/// checkpoints were deleted (or stopped being written); a server stopped for a week is not a warning.
struct AuditCheckpointCoverage: Sendable {
    /// The `at` of every checkpoint in `audit_checkpoints`, newest first.
    var databaseCheckpoints: [Date]
    /// The sink's checkpoint names, oldest first; nil without a sink.
    var sinkNames: [String]?
    var sinkDescription: String
    /// The first and last audit entries' instants; nil for an empty log.
    var entries: (first: Date, last: Date)?
    /// Seconds between checkpoints (`FITBASE_AUDIT_CHECKPOINT_SECONDS`).
    var interval: TimeInterval

    /// How many checkpoints the database keeps (``AuditCheckpoint/make(with:database:now:sink:)`` drops older ones).
    static let kept = 48

    /// What `database` holds for the comparison.
    static func read(
        from database: Database, sinkNames: [String]?, sinkDescription: String, interval: TimeInterval
    ) async throws -> AuditCheckpointCoverage {
        try await database.withConnection { db in
            let checkpoints = try await db.select().column("at").from("audit_checkpoints").orderBy("at", .descending)
                .all().map { try $0.decode(column: "at", as: Date.self) }
            func entry(_ direction: SQLDirection) async throws -> Date? {
                try await db.select().column("at").from("audit_entries").orderBy("at", direction).limit(1).first()?
                    .decode(column: "at", as: Date.self)
            }
            var entries: (Date, Date)?
            if let first = try await entry(.ascending), let last = try await entry(.descending) {
                entries = (first, last)
            }
            return AuditCheckpointCoverage(
                databaseCheckpoints: checkpoints, sinkNames: sinkNames, sinkDescription: sinkDescription,
                entries: entries, interval: interval)
        }
    }

    /// The warnings, each one sentence; empty when the checkpoints are where they should be.
    var warnings: [String] {
        var warnings: [String] = []
        let grace = 2 * interval
        let period = "checkpoints are written every \(Int(interval)) s (FITBASE_AUDIT_CHECKPOINT_SECONDS)"
        if let newest = databaseCheckpoints.first {
            if let last = entries?.last, last.timeIntervalSince(newest) > grace {
                warnings.append(
                    "the newest checkpoint in audit_checkpoints is of \(newest.formatted(.iso8601)), yet audit entries were "
                        + "written until \(last.formatted(.iso8601)) and \(period): checkpoints were deleted or are not written")
            }
        } else if let entries, entries.last.timeIntervalSince(entries.first) > grace {
            warnings.append(
                "audit_checkpoints is empty, yet audit entries span \(entries.first.formatted(.iso8601)) to "
                    + "\(entries.last.formatted(.iso8601)) and \(period): checkpoints were deleted or are not written")
        }
        guard let sinkNames else { return warnings }
        guard let newestInSink = sinkNames.last else {
            if !databaseCheckpoints.isEmpty {
                warnings.append(
                    "\(sinkDescription) (FITBASE_AUDIT_CHECKPOINT_URL) holds no checkpoint while audit_checkpoints holds "
                        + "\(databaseCheckpoints.count): is it the servers' sink, and can they write to it?")
            }
            return warnings
        }
        // The sink's newest checkpoints must all still be in the database, which keeps its newest `kept` (those older
        // than the database's oldest are dropped by design once it keeps that many).
        let inDatabase = Set(databaseCheckpoints.map(AuditCheckpoint.sinkLabel))
        let oldestKept =
            databaseCheckpoints.count >= Self.kept ? databaseCheckpoints.last.map(AuditCheckpoint.sinkLabel) : nil
        let expected = sinkNames.suffix(Self.kept).map { name in String(name.prefix { $0 != "-" }) }
            .filter { label in oldestKept.map { label >= $0 } ?? true }
        let missing = expected.filter { !inDatabase.contains($0) }
        if !missing.isEmpty {
            warnings.append(
                "audit_checkpoints lacks \(missing.count) of the \(expected.count) newest checkpoints in \(sinkDescription) "
                    + "(newest missing: \(missing.last ?? "")): rows were deleted, or the database was restored from an older backup")
        }
        if let last = entries?.last, let newest = Self.instant(ofSinkName: newestInSink),
            last.timeIntervalSince(newest) > grace
        {
            warnings.append(
                "the newest checkpoint in \(sinkDescription) is of \(newest.formatted(.iso8601)), yet audit entries were "
                    + "written until \(last.formatted(.iso8601)) and \(period): checkpoints are not reaching the sink")
        }
        return warnings
    }

    /// The instant a sink name starts with.
    static func instant(ofSinkName name: String) -> Date? {
        let label = name.prefix(while: { $0 != "-" })
        let basic = Date.ISO8601FormatStyle(dateSeparator: .omitted, timeSeparator: .omitted)
        guard let dot = label.firstIndex(of: "."), let fraction = Int64(label[label.index(after: dot)...].dropLast()),
            let whole = try? Date(String(label[..<dot]) + "Z", strategy: basic)
        else { return nil }
        return whole.addingTimeInterval(TimeInterval(fraction) / 1_000_000)
    }
}
