import AsyncHTTPClient
import FitBaseSigV4
import Foundation

/// Where checkpoints are written besides the database (`FITBASE_AUDIT_CHECKPOINT_URL`, see ``AuditConfiguration``):
/// one object per checkpoint, named ``AuditCheckpoint/sinkName`` (the newest sorts last), never replaced.
///
/// Whoever can write to the database can delete `audit_checkpoints` together with a cut of the chains; what the sink
/// holds stays, so `fitbase audit verify` finds the cut against the sink's newest checkpoint.
protocol AuditCheckpointSink: Sendable, CustomStringConvertible {
    /// Stores `document` as `name`; throws rather than replace an object of that name.
    func store(_ document: Data, named name: String) async throws
    /// The names of the checkpoints stored (``AuditCheckpoint/isSinkName(_:)``), oldest first.
    func names() async throws -> [String]
    /// The document stored as `name`, nil when there is none.
    func document(named name: String) async throws -> Data?
}

extension AuditConfiguration {
    /// The configured sink, nil without one (an S3 sink sends its requests through `client`).
    func openCheckpointSink(client: HTTPClient, clock: ServerClock) -> (any AuditCheckpointSink)? {
        switch checkpointSink {
        case nil: nil
        case .directory(let path): DirectoryCheckpointSink(directory: path)
        case .s3(let location, let prefix, let credentials):
            S3CheckpointSink(
                objects: S3ObjectClient(location: location, credentials: credentials, client: client), prefix: prefix,
                retentionDays: checkpointRetentionDays, clock: clock)
        }
    }
}

extension AuditCheckpoint {
    /// The checkpoint's name in a sink: its instant in UTC to the microsecond, ISO 8601 basic, then the start of its
    /// MAC (two instances writing in the same microsecond still pick different names), e.g.
    /// `20261120T090000.123456Z-0123456789abcdef.json`.
    var sinkName: String { "\(Self.sinkLabel(at))-\(mac.prefix(16)).json" }

    /// The instant part of a sink name.
    static func sinkLabel(_ at: Date) -> String {
        let microseconds = AuditChain.microseconds(at)
        let (seconds, fraction) = microseconds.quotientAndRemainder(dividingBy: 1_000_000)
        let whole = Date(timeIntervalSince1970: TimeInterval(seconds))
            .formatted(Date.ISO8601FormatStyle(dateSeparator: .omitted, timeSeparator: .omitted))
        let digits = String(fraction)
        return String(whole.dropLast()) + "." + String(repeating: "0", count: max(0, 6 - digits.count)) + digits + "Z"
    }

    /// Whether `name` is a sink name (other files or objects beside the checkpoints are ignored).
    static func isSinkName(_ name: String) -> Bool {
        let shape = Array("00000000T000000.000000Z-ffffffffffffffff.json")
        let characters = Array(name)
        guard characters.count == shape.count else { return false }
        return zip(characters, shape).allSatisfy { character, expected in
            switch expected {
            case "0": character.isASCII && character.isNumber
            case "f": character.isASCII && character.isHexDigit
            default: character == expected
            }
        }
    }
}

/// Checkpoints as files in a directory (created 0700 when missing), each written once and made read-only.
struct DirectoryCheckpointSink: AuditCheckpointSink {
    let directory: String

    var description: String { "the directory \(directory)" }

    func store(_ document: Data, named name: String) async throws {
        if !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let file = URL(fileURLWithPath: directory).appendingPathComponent(name)
        try document.write(to: file, options: .withoutOverwriting)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: file.path)
    }

    func names() async throws -> [String] {
        guard FileManager.default.fileExists(atPath: directory) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: directory).filter(AuditCheckpoint.isSinkName).sorted()
    }

    func document(named name: String) async throws -> Data? {
        FileManager.default.contents(atPath: URL(fileURLWithPath: directory).appendingPathComponent(name).path)
    }
}

/// Checkpoints as objects under a prefix of an S3 bucket, sent with object-lock retention (COMPLIANCE) when
/// `retentionDays` is set — the bucket must have object lock enabled, or S3 refuses them.
struct S3CheckpointSink: AuditCheckpointSink {
    let objects: S3ObjectClient
    let prefix: String
    let retentionDays: Int?
    let clock: ServerClock

    var description: String { "\(objects.location.description) under \"\(prefix)\"" }

    func store(_ document: Data, named name: String) async throws {
        var headers = [("Content-Type", "application/json")]
        if let retentionDays {
            let until = clock.now.addingTimeInterval(TimeInterval(retentionDays) * 86_400)
            headers += [
                ("x-amz-object-lock-mode", "COMPLIANCE"),
                ("x-amz-object-lock-retain-until-date", until.formatted(Date.ISO8601FormatStyle())),
            ]
        }
        try await objects.create(prefix + name, body: document, headers: headers)
    }

    func names() async throws -> [String] {
        try await objects.list(prefix: prefix).map { String($0.dropFirst(prefix.count)) }
            .filter(AuditCheckpoint.isSinkName)
    }

    func document(named name: String) async throws -> Data? {
        try await objects.get(prefix + name)
    }
}
