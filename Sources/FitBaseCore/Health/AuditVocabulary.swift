/// What was done to a user's health or cycle data, as the audit log records it.
public enum AuditAction: String, Sendable, Codable, CaseIterable {
    case read, write, delete, export, sync
}

/// How an audited request ended.
public enum AuditOutcome: String, Sendable, Codable, CaseIterable {
    /// It was carried out.
    case success
    /// It was refused (one entry per minute counts the refusals).
    case denied
}

/// What the audit log says was touched.
public enum AuditResource: String, Sendable, Codable, CaseIterable {
    case healthSamples, healthSummary, healthKey, cyclePeriods, workoutLogs, cycleSignals
}
