import FitBaseCore
import Synchronization

/// Refusals counted in memory until the next flush, by user, actor, action and resource.
final class AuditRefusals: Sendable {
    private struct Key: Hashable {
        var subject: UserID
        var actor: UserID?
        var action: AuditAction
        var resource: AuditResource
    }

    private let counts = Mutex<[Key: AuditEvent]>([:])
    /// Past this many distinct keys a flush is due whatever the time (bounds the memory a flood of users can take).
    static let limit = 10_000

    /// Counts one refusal; `false` when the tally is full and it was not counted.
    func count(_ event: AuditEvent) -> Bool {
        let key = Key(subject: event.subject, actor: event.actor, action: event.action, resource: event.resource)
        return counts.withLock { counts in
            if var counted = counts[key] {
                counted.count += 1
                counts[key] = counted
            } else if counts.count < Self.limit {
                var first = event
                first.count = 1
                counts[key] = first
            } else {
                return false
            }
            return true
        }
    }

    /// The counted refusals, forgotten here.
    func take() -> [AuditEvent] {
        counts.withLock { counts in
            defer { counts.removeAll() }
            return Array(counts.values)
        }
    }

    /// Puts back what a failed flush took.
    func restore(_ events: [AuditEvent]) {
        counts.withLock { counts in
            for event in events {
                let key = Key(subject: event.subject, actor: event.actor, action: event.action, resource: event.resource)
                counts[key, default: AuditEvent(actor: event.actor, subject: event.subject, action: event.action, resource: event.resource, count: 0, outcome: .denied, requestID: event.requestID, clientRequestID: event.clientRequestID)].count += event.count
            }
        }
    }

    var isEmpty: Bool { counts.withLock { $0.isEmpty } }
}
