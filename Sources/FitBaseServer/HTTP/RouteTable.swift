import HTTPTypes
import Synchronization

/// The routes the server answers, recorded as they are registered, so an unmatched request can be told apart:
/// a path nobody serves is 404, a path served for other methods is 405 with `Allow`.
///
/// Hummingbird's router answers both with 404; this table is consulted only on that cold path.
final class RouteTable: Sendable {
    private let routes = Mutex<[(segments: [Substring], method: HTTPRequest.Method)]>([])

    /// Records `method` on `path` (`/v1/items/{id}` or `/v1/items/:id` style).
    func add(_ path: String, method: HTTPRequest.Method) {
        let segments = path.split(separator: "/")
        routes.withLock { $0.append((segments, method)) }
    }

    /// The methods registered on routes matching `path`, in a stable order; empty when no route matches.
    func allowedMethods(forPath path: String) -> [HTTPRequest.Method] {
        let requested = path.split(separator: "/")
        let methods = routes.withLock { routes in
            routes.filter { Self.matches($0.segments, requested) }.map(\.method)
        }
        var allowed = Set(methods.map(\.rawValue))
        if allowed.contains("GET") { allowed.insert("HEAD") }
        return allowed.sorted().compactMap { HTTPRequest.Method($0) }
    }

    private static func matches(_ pattern: [Substring], _ path: [Substring]) -> Bool {
        if pattern.last == "**" {
            return path.count >= pattern.count - 1 && zip(pattern.dropLast(), path).allSatisfy(segmentMatches)
        }
        return pattern.count == path.count && zip(pattern, path).allSatisfy(segmentMatches)
    }

    private static func segmentMatches(_ pattern: Substring, _ segment: Substring) -> Bool {
        pattern == "*" || pattern.hasPrefix(":") || (pattern.hasPrefix("{") && pattern.hasSuffix("}")) || pattern == segment
    }
}
