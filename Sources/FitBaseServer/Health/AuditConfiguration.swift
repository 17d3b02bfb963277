import FitBaseSigV4
import Foundation

/// Where audit checkpoints go besides the database, and how often they are made (environment only).
///
/// | environment | meaning | default |
/// |---|---|---|
/// | `FITBASE_AUDIT_CHECKPOINT_URL` | a sink every checkpoint is also written to, one object per checkpoint, never replaced: a directory (`file:///path` or a path) or `s3://bucket/prefix?region=…&endpoint=…` (credentials as the media store's: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`); `fitbase audit verify` checks the chains against its newest | unset: checkpoints only in `audit_checkpoints` |
/// | `FITBASE_AUDIT_CHECKPOINT_RETENTION_DAYS` | with an `s3://` sink: each object is sent with S3 Object Lock retention (COMPLIANCE mode) for this many days; the bucket must be created with object lock enabled | unset: no retention asked (the bucket's default retention, if any, applies) |
/// | `FITBASE_AUDIT_CHECKPOINT_SECONDS` | how often each instance writes a checkpoint (and what `verify` expects) | `3600` |
///
/// A sink is tamper-evident only where the database's administrator cannot delete or rewrite what is in it: an S3
/// bucket with object lock (or another account's bucket), a directory on write-once or separately administered storage.
package struct AuditConfiguration: Sendable, Equatable {
    /// Where checkpoints are written besides the database.
    package enum Sink: Sendable, Equatable {
        /// A directory, one file per checkpoint.
        case directory(String)
        /// An S3-compatible bucket, one object per checkpoint under `prefix` (empty, or ending with `/`).
        case s3(S3Location, prefix: String, AWSCredentials)
    }

    package var checkpointSink: Sink?
    /// Object-lock retention of each checkpoint sent to an S3 sink, in days.
    package var checkpointRetentionDays: Int?
    /// Seconds between two checkpoints of one instance.
    package var checkpointInterval: TimeInterval = 3600

    package init() {}

    /// The settings in `environment`; an invalid one throws naming it.
    static func resolve(environment: [String: String]) throws(ConfigurationError) -> AuditConfiguration {
        var configuration = AuditConfiguration()
        if let text = environment["FITBASE_AUDIT_CHECKPOINT_URL"]?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
            configuration.checkpointSink = try sink(parsing: text, source: "FITBASE_AUDIT_CHECKPOINT_URL", environment: environment)
        }
        if let text = environment["FITBASE_AUDIT_CHECKPOINT_RETENTION_DAYS"] {
            guard let days = Int(text.trimmingCharacters(in: .whitespaces)), (1...36_500).contains(days) else {
                throw ConfigurationError(
                    setting: "audit-checkpoint-retention-days", source: "FITBASE_AUDIT_CHECKPOINT_RETENTION_DAYS", value: text,
                    expected: "a number of days from 1 to 36500")
            }
            guard case .s3 = configuration.checkpointSink else {
                throw ConfigurationError(
                    setting: "audit-checkpoint-retention-days", source: "FITBASE_AUDIT_CHECKPOINT_RETENTION_DAYS", value: text,
                    expected: "unset unless FITBASE_AUDIT_CHECKPOINT_URL is an s3:// bucket with object lock")
            }
            configuration.checkpointRetentionDays = days
        }
        if let text = environment["FITBASE_AUDIT_CHECKPOINT_SECONDS"] {
            guard let seconds = Int(text.trimmingCharacters(in: .whitespaces)), (60...86_400).contains(seconds) else {
                throw ConfigurationError(
                    setting: "audit-checkpoint-seconds", source: "FITBASE_AUDIT_CHECKPOINT_SECONDS", value: text,
                    expected: "a number of seconds from 60 to 86400")
            }
            configuration.checkpointInterval = TimeInterval(seconds)
        }
        return configuration
    }

    /// The sink `text` names (`s3://bucket/prefix?…`, `file:///path` or a path); `source` is named when it is invalid.
    static func sink(parsing text: String, source: String, environment: [String: String]) throws(ConfigurationError) -> Sink {
        let expected = "s3://bucket/prefix?region=REGION&endpoint=http(s)://host:port (all but the bucket optional), file:///path or a directory path"
        guard text.lowercased().hasPrefix("s3://") else {
            let path = text.hasPrefix("file://") ? String(text.dropFirst("file://".count)) : text
            guard !path.isEmpty, !path.contains("://") else {
                throw ConfigurationError(setting: "audit-checkpoint-url", source: source, value: text, expected: expected)
            }
            return .directory(path)
        }
        // The prefix is the URL's path; the rest is the media store's `s3://` form.
        guard var components = URLComponents(string: text) else {
            throw ConfigurationError(setting: "audit-checkpoint-url", source: source, value: text, expected: expected)
        }
        var prefix = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        components.path = ""
        guard let bucketURL = components.string, let location = S3Location(parsing: bucketURL),
            !prefix.contains("//"), prefix.allSatisfy({ $0.isASCII && !$0.isWhitespace })
        else {
            throw ConfigurationError(setting: "audit-checkpoint-url", source: source, value: text, expected: expected)
        }
        if !prefix.isEmpty, !prefix.hasSuffix("/") { prefix += "/" }
        guard let credentials = AWSCredentials(environment: environment) else {
            throw ConfigurationError(
                setting: "audit-checkpoint-url", source: source, value: text,
                expected: "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set for an s3:// sink")
        }
        return .s3(location, prefix: prefix, credentials)
    }
}
