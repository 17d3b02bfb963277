import Synchronization

/// Entries waiting for the next group commit of ``AuditLog/append(_:)``.
final class AuditQueue: Sendable {
    private struct State {
        var pending: [(event: AuditEvent, done: CheckedContinuation<Void, any Error>)] = []
        var writing = false
    }

    private let state = Mutex(State())

    /// Queues `event`; the caller that finds no commit under way writes the queue with `write`, batch after batch,
    /// until it is empty. Returns (or throws) when the batch holding `event` is committed (or failed).
    func append(_ event: AuditEvent, write: @escaping @Sendable ([AuditEvent]) async throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            let leads = state.withLock { state in
                state.pending.append((event, done))
                defer { state.writing = true }
                return !state.writing
            }
            guard leads else { return }
            Task {
                while true {
                    let batch = state.withLock { state in
                        defer { state.pending.removeAll() }
                        if state.pending.isEmpty { state.writing = false }
                        return state.pending
                    }
                    if batch.isEmpty { return }
                    do {
                        try await write(batch.map(\.event))
                        for waiter in batch { waiter.done.resume() }
                    } catch {
                        for waiter in batch { waiter.done.resume(throwing: error) }
                    }
                }
            }
        }
    }
}
