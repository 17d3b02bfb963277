import FitBaseCore
import Foundation
import Logging
import NIOCore
import SQLKit

/// What an admin uploads for a workout.
enum WorkoutMediaKind: String, Sendable, CaseIterable {
    /// A JPEG, PNG or HEIC image, cleaned as profile photos are.
    case thumbnail
    /// An MP4 or QuickTime video, streamed to the store.
    case video
}

/// A workout's thumbnail or video as its row records it.
struct WorkoutMedia: Sendable, Equatable {
    let workout: WorkoutID
    let kind: WorkoutMediaKind
    let version: Int64
    let key: MediaKey
    let contentType: String
    let bytes: Int64
    let updatedAt: Date
}

/// SQL for `workout_media`.
struct WorkoutMediaStore: Sendable {
    let database: Database

    func media(_ workout: WorkoutID, _ kind: WorkoutMediaKind) async throws -> WorkoutMedia? {
        try await database.withConnection { db in try await Self.media(workout, kind, on: db) }
    }

    static func media(_ workout: WorkoutID, _ kind: WorkoutMediaKind, on db: any SQLDatabase, locking: Bool = false) async throws -> WorkoutMedia? {
        var query = db.select().columns("version", "object_key", "content_type", "bytes", "updated_at").from("workout_media")
            .where("workout_id", .equal, workout.rawValue).where("kind", .equal, kind.rawValue)
        if locking { query = query.for(.update) }
        return try await query.first().flatMap { row in
            guard let key = MediaKey(try row.decode(column: "object_key", as: String.self)) else { return nil }
            return WorkoutMedia(
                workout: workout, kind: kind, version: try row.decode(column: "version", as: Int64.self), key: key,
                contentType: try row.decode(column: "content_type", as: String.self), bytes: try row.decode(column: "bytes", as: Int64.self),
                updatedAt: try row.decode(column: "updated_at", as: Date.self)
            )
        }
    }

    /// Records `media` as the workout's current one of its kind, one version after what was there; returns what it
    /// replaced. Nil and nothing recorded when the workout does not exist.
    func record(_ media: WorkoutMedia) async throws -> (recorded: WorkoutMedia, replaced: WorkoutMedia?)? {
        try await database.transaction { db in
            guard try await db.select().column("id").from("workouts").where("id", .equal, media.workout.rawValue).for(.update).first() != nil else {
                return nil
            }
            let previous = try await Self.media(media.workout, media.kind, on: db, locking: true)
            let recorded = WorkoutMedia(
                workout: media.workout, kind: media.kind, version: (previous?.version ?? 0) + 1, key: media.key,
                contentType: media.contentType, bytes: media.bytes, updatedAt: media.updatedAt)
            try await db.delete(from: "workout_media").where("workout_id", .equal, media.workout.rawValue).where("kind", .equal, media.kind.rawValue).run()
            try await db.insert(into: "workout_media")
                .columns("workout_id", "kind", "version", "object_key", "content_type", "bytes", "updated_at")
                .values(
                    SQLBind(media.workout.rawValue), SQLBind(media.kind.rawValue), SQLBind(recorded.version), SQLBind(media.key.path),
                    SQLBind(media.contentType), SQLBind(media.bytes), SQLBind(media.updatedAt)
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
        let base = "catalog/workouts/\(workout.rawValue.uuidString.lowercased())/\(kind.rawValue)-\(Int64(now.timeIntervalSince1970))-\(random)"
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
            stored = try await storage.put(key, contentType: contentType, body: WholeBody(ByteBuffer(bytes: image.bytes)))
        case .video:
            guard let key = MediaKey("\(base).mp4") else { throw MediaStorageError.storeFailed("no key for \(base)") }
            do {
                stored = try await storage.put(key, contentType: "video/mp4", body: LimitedBody(base: body, limit: configuration.videoMaxBytes))
            } catch MediaStorageError.tooLarge {
                throw Problem.payloadTooLarge(limit: Int(configuration.videoMaxBytes))
            }
            let head = try await storage.get(key, range: .from(0, through: 11))?.collect(upTo: 12)
            guard let head, let type = Self.videoType(Array(head.readableBytesView)) else {
                try? await storage.delete(key)
                throw Problem.validationFailed([.init(field: "body", message: "is not an MP4 or QuickTime video")])
            }
            contentType = type
        }
        do {
            let media = WorkoutMedia(workout: workout, kind: kind, version: 0, key: stored.key, contentType: contentType, bytes: stored.size, updatedAt: now)
            guard let (recorded, replaced) = try await store.record(media) else { throw Problem.notFound("No workout \(workout).") }
            if let replaced { await deleteObject(replaced.key) }
            return recorded
        } catch {
            await deleteObject(stored.key)
            throw error
        }
    }

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
