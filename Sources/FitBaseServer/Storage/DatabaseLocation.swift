import Foundation

/// Where the data lives, parsed from `--database-url` / `FITBASE_DATABASE_URL`.
///
/// Accepted forms: `sqlite:///absolute/path.sqlite`, `sqlite://relative/path.sqlite`, a plain file path (SQLite),
/// and `postgres://user:password@host:port/database?tlsmode=…` (also `postgresql://`).
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(url: String)

    /// Parses a database URL; `nil` when the text names neither engine.
    public init?(parsing text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        let lowercased = trimmed.lowercased()
        if lowercased.hasPrefix("postgres://") || lowercased.hasPrefix("postgresql://")
            || lowercased.hasPrefix("postgres+tcp://") || lowercased.hasPrefix("postgres+uds://")
        {
            self = .postgres(url: trimmed)
        } else if lowercased.hasPrefix("sqlite://") {
            let path = String(trimmed.dropFirst("sqlite://".count))
            guard !path.isEmpty, !path.contains("?") else { return nil }
            self = .sqlite(path: path)
        } else if lowercased.hasPrefix("sqlite:") {
            let path = String(trimmed.dropFirst("sqlite:".count))
            guard !path.isEmpty, !path.contains("?") else { return nil }
            self = .sqlite(path: path)
        } else if trimmed.contains("://") {
            return nil
        } else {
            self = .sqlite(path: trimmed)
        }
    }

    /// The engine, for logs and `/readyz`.
    public var engine: DatabaseEngine {
        switch self {
        case .sqlite: .sqlite
        case .postgres: .postgres
        }
    }

    /// A printable form with any password removed.
    public var description: String {
        switch self {
        case .sqlite(let path):
            return "sqlite://\(path)"
        case .postgres(let url):
            guard var components = URLComponents(string: url) else { return "postgres://…" }
            if components.password != nil { components.password = "***" }
            return components.string ?? "postgres://…"
        }
    }
}

/// The SQL engines FitBase runs on. Dialect differences are decided on this value inside `Storage/` only.
public enum DatabaseEngine: String, Sendable {
    case sqlite
    case postgres
}
