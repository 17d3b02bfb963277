import Foundation
import NIOCore

/// Where media objects (profile photos, workout artwork and video) live: the data directory by default, or any
/// S3-compatible store. Keys are ``MediaKey``s; a write either stores the whole object or leaves nothing behind.
protocol MediaStorage: Sendable {
    /// Stores `body` under `key`, replacing what was there, streaming it (a large body is never held in memory);
    /// if `body` throws or the write fails, nothing is left under `key` nor anywhere else.
    func put<Body: AsyncSequence & Sendable>(
        _ key: MediaKey, contentType: String, body: Body
    ) async throws -> StoredMedia where Body.Element == ByteBuffer

    /// The object under `key`, or the bytes of `range` of it; nil when there is none. A range that starts past the end
    /// throws ``MediaStorageError/rangeNotSatisfiable(size:)``.
    func get(_ key: MediaKey, range: MediaByteRange?) async throws -> MediaContent?

    /// Removes the object under `key`; no error when there is none.
    func delete(_ key: MediaKey) async throws

    /// Every object whose key starts with `prefix`, sorted by key.
    func list(prefix: String) async throws -> [StoredMedia]

    /// A URL that reaches `key` without FitBase until `expires` after `now`, or nil when the store has none (the data
    /// directory: FitBase serves the object itself, through a signed link of its own).
    func presignedURL(for key: MediaKey, expires: Duration, now: Date) -> String?

    /// What `/readyz` and the logs call this store (`local`, `s3`).
    var kind: String { get }
}

extension MediaStorage {
    /// Removes every object under `prefix` (an account's, when it is deleted).
    func deleteAll(prefix: String) async throws {
        for object in try await list(prefix: prefix) {
            try await delete(object.key)
        }
    }
}

/// A body already in memory, as the one chunk of a ``MediaStorage/put(_:contentType:body:)``.
struct WholeBody: AsyncSequence, Sendable {
    let buffer: ByteBuffer

    init(_ buffer: ByteBuffer) {
        self.buffer = buffer
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var buffer: ByteBuffer?

        mutating func next() async -> ByteBuffer? {
            defer { buffer = nil }
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(buffer: buffer) }
}

/// One stored object: its key and size in bytes.
struct StoredMedia: Sendable, Equatable {
    let key: MediaKey
    let size: Int64
}

/// An object (or part of one) being read: its whole size, the bytes `body` delivers, and its type.
struct MediaContent: Sendable {
    /// The whole object's size in bytes.
    let size: Int64
    /// The bytes `read` delivers: the whole object or the requested range (nil for an empty object).
    let range: ClosedRange<Int64>?
    /// The media type it was stored with.
    let contentType: String
    /// Hands each chunk of the bytes to `consume` in order, reading the next one only when `consume` has returned.
    let read: @Sendable (_ consume: (ByteBuffer) async throws -> Void) async throws -> Void
    /// The file holding the object, when it is one on this machine (a connection can then send it itself).
    var localFile: LocalFile? = nil

    /// Every byte `read` delivers in one buffer (small objects: images on their way to be resized, tests).
    func collect(upTo maxBytes: Int) async throws -> ByteBuffer {
        var all = ByteBuffer()
        try await read { chunk in
            guard all.readableBytes + chunk.readableBytes <= maxBytes else { throw MediaStorageError.tooLarge(limit: maxBytes) }
            var chunk = chunk
            all.writeBuffer(&chunk)
        }
        return all
    }
}

/// What a media store can refuse.
enum MediaStorageError: Error, Equatable, CustomStringConvertible {
    /// The requested range starts at or past the end of an object of `size` bytes.
    case rangeNotSatisfiable(size: Int64)
    /// A body, or what a reader collects, passed `limit` bytes.
    case tooLarge(limit: Int)
    /// The store answered something FitBase cannot use (an S3 error, a malformed answer).
    case storeFailed(String)

    var description: String {
        switch self {
        case .rangeNotSatisfiable(let size): "the range starts past the end of the object (\(size) bytes)"
        case .tooLarge(let limit): "more than \(limit) bytes"
        case .storeFailed(let reason): "media store: \(reason)"
        }
    }
}
