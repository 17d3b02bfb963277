import FitBaseCore
import Foundation

/// One link of a user's chain.
struct AuditEntry: Sendable, Equatable {
    /// Position in the subject's chain, from 1.
    var seq: Int64
    var at: Date
    /// Who acted (`nil` for the system, e.g. account deletion by an operator).
    var actorID: UUID?
    /// Whose data it was: the chain's owner.
    var subjectID: UUID
    /// An ``AuditAction`` (kept as stored, so an altered value is hashed as it reads).
    var action: String
    /// What was touched: `healthSamples`, `healthSummary`, `healthKey`, `cyclePeriods`, `workoutLogs`.
    var resource: String
    /// How many records (or buckets, or refusals).
    var count: Int
    /// The id the server gave the request.
    var requestID: String?
    /// The id the client sent in `X-Request-ID`, if any: the client's word, recorded apart from the server's.
    var clientRequestID: String? = nil
    /// An ``AuditOutcome``, as stored.
    var outcome: String
    var prevHash: String
    var hash: String
}

/// An entry about to be appended (the log assigns seq, time and hashes).
struct AuditEvent: Sendable {
    var actor: UserID?
    var subject: UserID
    var action: AuditAction
    var resource: AuditResource
    var count: Int
    var outcome: AuditOutcome = .success
    var requestID: String? = RequestScope.current.requestID
    var clientRequestID: String? = RequestScope.current.clientRequestID
    /// The time of the change it records, when it is appended later than that (``AuditLog/appendAtCommit(_:now:on:engine:)``);
    /// otherwise the time the append is given.
    var at: Date? = nil
}
