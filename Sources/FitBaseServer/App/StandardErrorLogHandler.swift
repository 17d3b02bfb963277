import FitBaseCore
import Foundation
import Logging
import Synchronization

/// Log lines on standard error: `2026-11-23T19:17:53Z info fitbase: key=value … [source] message`.
///
/// Like swift-log's `StreamLogHandler`, except that metadata is rendered when a line is written, not each time it is
/// set: Hummingbird gives every request a logger with its own `hb.request.id`, and `StreamLogHandler` rendered that on
/// every request even with nothing logged.
package struct StandardErrorLogHandler: LogHandler {
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String

    package init(label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider?) {
        self.label = label
        self.logLevel = level
        self.metadataProvider = metadataProvider
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var all = metadataProvider?.get() ?? [:]
        all.merge(metadata) { _, own in own }
        if let extra = event.metadata { all.merge(extra) { _, given in given } }
        var line = "\(InternetDateTime.string(from: Date())) \(event.level) \(label):"
        for (key, value) in all.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        line += " [\(event.source)] \(event.message)\n"
        Self.output.withLock { _ in FileHandle.standardError.write(Data(line.utf8)) }
    }

    /// Whole lines, one writer at a time.
    private static let output = Mutex(())
}
