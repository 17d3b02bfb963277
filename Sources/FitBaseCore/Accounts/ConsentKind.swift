/// What a user may consent to.
public enum ConsentKind: String, Sendable, Hashable, Codable, CaseIterable {
    case terms, privacy, healthData, marketing, analytics
}
