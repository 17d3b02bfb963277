import FitBaseCore
import Foundation
import Logging
import NIOCore
import SQLKit

/// A workout's thumbnail or video as its row records it.
struct WorkoutMedia: Sendable, Equatable {
    let workout: WorkoutID
    let kind: WorkoutMediaKind
    let version: Int64
    let key: MediaKey
    let contentType: String
    let bytes: Int64
    let updatedAt: Date
    /// The SHA-256 of the stored file (hex).
    let digest: String
}

/// SQL for `workout_media`.
struct WorkoutMediaStore: Sendable {
    let database: Database

    func media(_ workout: WorkoutID, _ kind: WorkoutMediaKind) async throws -> WorkoutMedia? {
        try await database.withConnection { db in try await Self.media(workout, kind, on: db) }
    }

    static func media(_ workout: WorkoutID, _ kind: WorkoutMediaKind, on db: any SQLDatabase, locking: Bool = false) async throws -> WorkoutMedia? {
        var query = db.select().columns("version", "object_key", "content_type", "bytes", "updated_at", "digest").from("workout_media")
            .where("workout_id", .equal, workout.rawValue).where("kind", .equal, kind.rawValue)
        if locking { query = query.for(.update) }
        return try await query.first().flatMap { row in
            guard let key = MediaKey(try row.decode(column: "object_key", as: String.self)) else { return nil }
            return WorkoutMedia(
                workout: workout, kind: kind, version: try row.decode(column: "version", as: Int64.self), key: key,
                contentType: try row.decode(column: "content_type", as: String.self), bytes: try row.decode(column: "bytes", as: Int64.self),
                updatedAt: try row.decode(column: "updated_at", as: Date.self),
                digest: try row.decode(column: "digest", as: String?.self) ?? MediaDigest.of(key: key)
            )
        }
    }

    /// Records `media` as the workout's current one of its kind, one version after what was there; returns what it
    /// replaced. Nil and nothing recorded when the workout does not exist.
    func record(_ media: WorkoutMedia) async throws -> (recorded: WorkoutMedia, replaced: WorkoutMedia?)? {
        try await database.transaction { db in
            guard try await CatalogStore.contains(media.workout, locking: true, on: db) else { return nil }
            let previous = try await Self.media(media.workout, media.kind, on: db, locking: true)
            let recorded = WorkoutMedia(
                workout: media.workout, kind: media.kind, version: (previous?.version ?? 0) + 1, key: media.key,
                contentType: media.contentType, bytes: media.bytes, updatedAt: media.updatedAt, digest: media.digest)
            try await db.delete(from: "workout_media").where("workout_id", .equal, media.workout.rawValue).where("kind", .equal, media.kind.rawValue).run()
            try await db.insert(into: "workout_media")
                .columns("workout_id", "kind", "version", "object_key", "content_type", "bytes", "updated_at", "digest")
                .values(
                    SQLBind(media.workout.rawValue), SQLBind(media.kind.rawValue), SQLBind(recorded.version), SQLBind(media.key.path),
                    SQLBind(media.contentType), SQLBind(media.bytes), SQLBind(media.updatedAt), SQLBind(media.digest)
                )
                .run()
            return (recorded, previous)
        }
    }
}

/// Workout artwork and video: admins upload them (``WorkoutMediaUploads``); anyone gets a link to a thumbnail or a
/// free workout's video, only callers entitled at that moment to a premium one's.
struct CatalogMedia: Sendable {
    let uploads: WorkoutMediaUploads
    let links: MediaLinks
    let entitlements: EntitlementService

    /// A link to the workout's `kind` valid from `now`: anyone's for a thumbnail or a free workout's video; for a premium
    /// workout's video, only a caller entitled to premium content now (401 without a caller, 402 without the tier).
    func link(_ workout: WorkoutID, _ kind: WorkoutMediaKind, caller: Caller?, now: Date) async throws -> (WorkoutMedia, String, Date) {
        guard let entry = try await uploads.catalog.workout(workout), let media = try await uploads.store.media(workout, kind) else {
            throw Problem.notFound("No \(kind.rawValue) for workout \(workout).")
        }
        if kind == .video, entry.isPremium {
            guard let caller else { throw Problem.unauthenticated(.authenticationRequired, "A premium workout's video needs a signed-in caller.") }
            try await entitlements.require(.premiumContent, caller: caller, doing: "Watching a premium workout's video")
        }
        let expiry = now.addingTimeInterval(Double(uploads.configuration.linkLifetime.components.seconds))
        let url = uploads.storage.presignedURL(for: media.key, expires: uploads.configuration.linkLifetime, now: now) ?? links.url(for: media.key, expiry: expiry)
        return (media, url, expiry)
    }
}

/// Stores workout artwork and video (a video streamed to the store, never whole in memory): the admin route and
/// `fitbase seed` both go through it.
struct WorkoutMediaUploads: Sendable {
    let store: WorkoutMediaStore
    let catalog: CatalogStore
    let storage: any MediaStorage
    let inspector: ImageInspector
    let configuration: MediaConfiguration
    let logger: Logger

    /// Stores `body` as the workout's `kind`. A thumbnail is read whole (at most the photo limit), checked and cleaned
    /// like a profile photo; a video is streamed to the store (at most `FITBASE_VIDEO_MAX_BYTES`) and then checked to
    /// be MP4 or QuickTime from its first bytes. A refused, cut-off or oversized upload leaves nothing in the store.
    func upload<Body: AsyncSequence & Sendable>(
        _ body: Body, kind: WorkoutMediaKind, to workout: WorkoutID, now: Date
    ) async throws -> WorkoutMedia where Body.Element == ByteBuffer {
        guard try await catalog.workout(workout) != nil else { throw Problem.notFound("No workout \(workout).") }
        let random = (0..<4).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let stored: StoredMedia
        let contentType: String
        let digest: String
        let base = "\(Self.prefix(of: workout))\(kind.rawValue)-\(Int64(now.timeIntervalSince1970))-\(random)"
        switch kind {
        case .thumbnail:
            var bytes = ByteBuffer()
            do {
                for try await var chunk in LimitedBody(base: body, limit: Int64(configuration.photoMaxBytes)) { bytes.writeBuffer(&chunk) }
            } catch MediaStorageError.tooLarge {
                throw Problem.payloadTooLarge(limit: configuration.photoMaxBytes)
            }
            let image: InspectedImage
            do {
                image = try inspector.inspect(Array(bytes.readableBytesView))
            } catch {
                throw Problem.validationFailed([.init(field: "body", message: ProfilePhotos.message(for: error))])
            }
            guard let key = MediaKey("\(base).\(image.format.fileExtension)") else { throw MediaStorageError.storeFailed("no key for \(base)") }
            contentType = image.format.contentType
            digest = MediaDigest.of(image.bytes)
            stored = try await storage.put(key, contentType: contentType, body: WholeBody(ByteBuffer(bytes: image.bytes)))
        case .video:
            // The type is known once the first bytes are in: the object is stored under a key whose extension says it
            // (`.mp4` or `.mov`), so the data directory serves a QuickTime video as `video/quicktime`.
            let hashed = HashingBody(LimitedBody(base: body, limit: configuration.videoMaxBytes))
            let (type, rest) = try await VideoHead.read(hashed)
            guard let type else {
                throw Problem.validationFailed([.init(field: "body", message: "is not an MP4 or QuickTime video")])
            }
            guard let key = MediaKey("\(base).\(type == "video/quicktime" ? "mov" : "mp4")") else { throw MediaStorageError.storeFailed("no key for \(base)") }
            do {
                stored = try await storage.put(key, contentType: type, body: rest)
            } catch MediaStorageError.tooLarge {
                throw Problem.payloadTooLarge(limit: Int(configuration.videoMaxBytes))
            }
            guard let hash = hashed.digest else { throw MediaStorageError.storeFailed("the video's digest is missing") }
            contentType = type
            digest = hash
        }
        do {
            let media = WorkoutMedia(
                workout: workout, kind: kind, version: 0, key: stored.key, contentType: contentType, bytes: stored.size, updatedAt: now, digest: digest)
            guard let (recorded, replaced) = try await store.record(media) else { throw Problem.notFound("No workout \(workout).") }
            if let replaced { await deleteObject(replaced.key) }
            return recorded
        } catch {
            await deleteObject(stored.key)
            throw error
        }
    }

    /// Every file of a workout lies under this prefix (so deleting the workout lists and removes them all).
    static func prefix(of workout: WorkoutID) -> String { "catalog/workouts/\(workout.rawValue.uuidString.lowercased())/" }

    /// `video/mp4` or `video/quicktime` when `head` starts an ISO base media file (`ftyp` box), nil otherwise.
    static func videoType(_ head: [UInt8]) -> String? {
        guard head.count >= 12, String(decoding: head[4..<8], as: UTF8.self) == "ftyp" else { return nil }
        return String(decoding: head[8..<12], as: UTF8.self) == "qt  " ? "video/quicktime" : "video/mp4"
    }

    private func deleteObject(_ key: MediaKey) async {
        do {
            try await storage.delete(key)
        } catch {
            logger.warning("could not delete a replaced media object", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }
}

/// A body that throws ``MediaStorageError/tooLarge(limit:)`` once more than `limit` bytes have come through.
struct LimitedBody<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    let base: Base
    let limit: Int64

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let limit: Int64
        var seen: Int64 = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else { return nil }
            seen += Int64(chunk.readableBytes)
            guard seen <= limit else { throw MediaStorageError.tooLarge(limit: Int(limit)) }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), limit: limit) }
}

/// The first bytes of a video upload, read to learn its type before it is stored (its key's extension says it).
enum VideoHead {
    /// The type of the video `body` starts (nil when it is not MP4 or QuickTime) and the body with those bytes put back.
    static func read<Body: AsyncSequence & Sendable>(_ body: Body) async throws -> (type: String?, rest: ReplayedBody<Body>)
    where Body.Element == ByteBuffer {
        var iterator = body.makeAsyncIterator()
        var head = ByteBuffer()
        while head.readableBytes < 12, var chunk = try await iterator.next() {
            head.writeBuffer(&chunk)
        }
        let type = WorkoutMediaUploads.videoType(Array(head.readableBytesView.prefix(12)))
        return (type, ReplayedBody(head: head, rest: iterator))
    }
}

/// A body whose first bytes were read already: they come first, then the rest. Iterated once, by one task (a media
/// store reads a body once), which is what makes handing its iterator on safe.
final class ReplayedBody<Base: AsyncSequence>: AsyncSequence, @unchecked Sendable where Base.Element == ByteBuffer {
    private var head: ByteBuffer?
    private var rest: Base.AsyncIterator

    init(head: ByteBuffer, rest: Base.AsyncIterator) {
        self.head = head.readableBytes > 0 ? head : nil
        self.rest = rest
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let owner: ReplayedBody

        func next() async throws -> ByteBuffer? { try await owner.next() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(owner: self) }

    private func next() async throws -> ByteBuffer? {
        if let head {
            self.head = nil
            return head
        }
        return try await rest.next()
    }
}
