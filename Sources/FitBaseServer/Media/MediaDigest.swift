import Crypto
import Foundation
import NIOCore
import Synchronization

/// The SHA-256 (hex) a stored object is known by in answers (`digest`): image caches key on it, so it changes exactly
/// when the content does.
enum MediaDigest {
    static func of(_ bytes: some DataProtocol) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// A row from before digests were recorded: the SHA-256 of its object key (unique to each upload).
    static func of(key: MediaKey) -> String {
        of(Array(key.path.utf8))
    }

    static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }
}

/// A body whose bytes are hashed as they go through (a video streamed to the store); ``digest`` holds the SHA-256 of
/// everything that passed once the body has ended.
final class HashingBody<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    private let base: Base
    private let state = Mutex((hasher: SHA256(), digest: String?.none))

    init(_ base: Base) {
        self.base = base
    }

    /// The SHA-256 (hex) of the whole body, once it has been read to its end.
    var digest: String? { state.withLock { $0.digest } }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let owner: HashingBody

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else {
                owner.state.withLock { state in
                    if state.digest == nil { state.digest = MediaDigest.hex(state.hasher.finalize()) }
                }
                return nil
            }
            owner.state.withLock { $0.hasher.update(data: chunk.readableBytesView) }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), owner: self) }
}
