import Foundation
import Synchronization

/// One small value the app keeps on the device across launches, beside the local store but outside it (erasing the
/// store on sign-out must not lose what outlives a session: the push token, a link opened before signing in): JSON in
/// a file of the data directory, readable by its owner only, replaced atomically. `nil` file: kept in memory only
/// (previews, tests).
final class DeviceFile<Value: Codable & Sendable>: Sendable {
    private let url: URL?
    private let value: Mutex<Value?>

    /// The value kept at `url` (read now: a missing or unreadable file holds nothing).
    init(_ url: URL?) {
        self.url = url
        value = Mutex(url.flatMap { try? Data(contentsOf: $0) }.flatMap { try? JSONDecoder().decode(Value.self, from: $0) })
    }

    /// What the file holds.
    func load() -> Value? {
        value.withLock { $0 }
    }

    /// Replaces what the file holds (`nil` removes the file). A write that fails (a full disk) keeps the value in
    /// memory for this launch.
    func save(_ new: Value?) {
        value.withLock { value in
            value = new
            guard let url else { return }
            guard let new, let data = try? JSONEncoder().encode(new) else {
                try? FileManager.default.removeItem(at: url)
                return
            }
            try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            guard (try? data.write(to: url, options: .atomic)) != nil else { return }
            try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        }
    }
}
