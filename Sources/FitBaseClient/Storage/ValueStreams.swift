import Foundation
import Synchronization

/// The streams handed out for a value that changes — the session's state, the sync status, the entitlement: every
/// value sent reaches each stream still open, and a stream dropped by its reader is forgotten.
///
/// For the SDK's actors and the Kit's fakes alike; the owner sends from its own isolation, so a stream's first value
/// (which the owner yields on the continuation it gets back) cannot be overtaken by a later one.
package final class ValueStreams<Value: Sendable>: Sendable {
    private let continuations = Mutex<[UUID: AsyncStream<Value>.Continuation]>([:])

    package init() {}

    /// A new stream keeping the newest `buffer` values its reader has not taken yet, and its continuation for the
    /// first value.
    package func make(buffer: Int) -> (stream: AsyncStream<Value>, continuation: AsyncStream<Value>.Continuation) {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(buffer))
        let id = UUID()
        continuations.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.continuations.withLock { $0.removeValue(forKey: id) } }
        return (stream, continuation)
    }

    /// Sends `value` to every open stream.
    package func send(_ value: Value) {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield(value) }
    }
}
