import FitBaseCore
import Foundation
import SQLKit

/// A user's current profile photo as its row records it.
struct ProfilePhoto: Sendable, Equatable {
    let user: UserID
    /// Grows by one with each upload; part of the object's key.
    let version: Int64
    let format: ImageFormat
    let width: Int
    let height: Int
    let bytes: Int64
    let updatedAt: Date
    /// The SHA-256 of the stored bytes (hex): what image caches key on.
    let digest: String
    /// The stored object: `users/<user>/photo/<version>-<random>.<ext>` (the random part keeps two uploads racing for
    /// one version from writing the same object).
    let key: MediaKey
    /// The copy served for ``PhotoSize/thumbnail``; nil when the photo is small enough already or could not be decoded
    /// (the photo is served for both sizes then).
    let thumbnail: Thumbnail?

    /// A thumbnail's object (`<photo key without extension>-thumb.<ext>`), type and size in pixels.
    struct Thumbnail: Sendable, Equatable {
        let key: MediaKey
        let format: ImageFormat
        let width: Int
        let height: Int
    }

    /// The objects of this photo: the photo and its thumbnail.
    var keys: [MediaKey] { [key] + (thumbnail.map { [$0.key] } ?? []) }

    /// The key of the thumbnail of the photo stored under `key`.
    static func thumbnailKey(for key: MediaKey, format: ImageFormat) -> MediaKey? {
        let path = key.path
        let stem = path.lastIndex(of: ".").map { String(path[..<$0]) } ?? path
        return MediaKey("\(stem)-thumb.\(format.fileExtension)")
    }

    /// A new object key for version `version` of `user`'s photo.
    static func newKey(of user: UserID, version: Int64, format: ImageFormat) -> MediaKey? {
        let random = (0..<4).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        return MediaKey("\(prefix(of: user))photo/\(version)-\(random).\(format.fileExtension)")
    }

    /// Every object of a user's lies under this prefix (so deleting the account lists and removes them all).
    static func prefix(of user: UserID) -> String { "users/\(user.rawValue.uuidString.lowercased())/" }
}

/// SQL for `profile_photos`.
struct ProfilePhotoStore: Sendable {
    let database: Database

    func photo(of user: UserID) async throws -> ProfilePhoto? {
        try await database.withConnection { db in try await Self.photo(of: user, on: db) }
    }

    static func photo(of user: UserID, on db: any SQLDatabase, locking: Bool = false) async throws -> ProfilePhoto? {
        var query = db.select().columns(
            "version", "format", "width", "height", "bytes", "updated_at", "object_key", "digest", "thumbnail_key", "thumbnail_width", "thumbnail_height"
        ).from("profile_photos")
            .where("user_id", .equal, user.rawValue)
        if locking { query = query.for(.update) }
        return try await query.first().flatMap { row in
            guard let key = MediaKey(try row.decode(column: "object_key", as: String.self)) else { return nil }
            var thumbnail: ProfilePhoto.Thumbnail?
            if let text = try row.decode(column: "thumbnail_key", as: String?.self), let thumbnailKey = MediaKey(text),
                let width = try row.decode(column: "thumbnail_width", as: Int?.self), let height = try row.decode(column: "thumbnail_height", as: Int?.self),
                let format = ImageFormat(fileExtension: thumbnailKey)
            {
                thumbnail = .init(key: thumbnailKey, format: format, width: width, height: height)
            }
            return ProfilePhoto(
                user: user, version: try row.decode(column: "version", as: Int64.self),
                format: ImageFormat(rawValue: try row.decode(column: "format", as: String.self)) ?? .jpeg,
                width: try row.decode(column: "width", as: Int.self), height: try row.decode(column: "height", as: Int.self),
                bytes: try row.decode(column: "bytes", as: Int64.self), updatedAt: try row.decode(column: "updated_at", as: Date.self),
                digest: try row.decode(column: "digest", as: String?.self) ?? MediaDigest.of(key: key), key: key, thumbnail: thumbnail
            )
        }
    }

    /// The version the next upload of `user` takes (one more than the current one, or 1).
    func nextVersion(of user: UserID) async throws -> Int64 {
        (try await photo(of: user)?.version ?? 0) + 1
    }

    /// Records `photo` as the user's current one, unless a newer version was recorded meanwhile; returns the photo it
    /// replaced (whose object the caller deletes), or `nil` when there was none. Throws ``Superseded`` when a
    /// concurrent upload won.
    func record(_ photo: ProfilePhoto) async throws -> ProfilePhoto? {
        try await database.transaction { db in
            let previous = try await Self.photo(of: photo.user, on: db, locking: true)
            if let previous, previous.version >= photo.version { throw Superseded() }
            if previous == nil {
                try await db.insert(into: "profile_photos")
                    .columns("user_id", "version", "format", "width", "height", "bytes", "updated_at", "object_key", "digest", "thumbnail_key",
                        "thumbnail_width", "thumbnail_height")
                    .values(
                        SQLBind(photo.user.rawValue), SQLBind(photo.version), SQLBind(photo.format.rawValue), SQLBind(photo.width),
                        SQLBind(photo.height), SQLBind(photo.bytes), SQLBind(photo.updatedAt), SQLBind(photo.key.path), SQLBind(photo.digest),
                        SQLBind(photo.thumbnail?.key.path), SQLBind(photo.thumbnail?.width), SQLBind(photo.thumbnail?.height)
                    )
                    .run()
            } else {
                try await db.update("profile_photos")
                    .set("version", to: photo.version).set("format", to: photo.format.rawValue).set("width", to: photo.width)
                    .set("height", to: photo.height).set("bytes", to: photo.bytes).set("updated_at", to: photo.updatedAt).set("object_key", to: photo.key.path)
                    .set("digest", to: photo.digest).set("thumbnail_key", to: photo.thumbnail?.key.path)
                    .set("thumbnail_width", to: photo.thumbnail?.width).set("thumbnail_height", to: photo.thumbnail?.height)
                    .where("user_id", .equal, photo.user.rawValue)
                    .run()
            }
            return previous
        }
    }

    /// Removes the user's row; returns what it recorded.
    func remove(_ user: UserID) async throws -> ProfilePhoto? {
        try await database.transaction { db in
            let previous = try await Self.photo(of: user, on: db, locking: true)
            try await Self.remove(user, on: db)
            return previous
        }
    }

    static func remove(_ user: UserID, on db: any SQLDatabase) async throws {
        try await db.delete(from: "profile_photos").where("user_id", .equal, user.rawValue).run()
    }

    /// Another upload of the same user recorded a newer version first.
    struct Superseded: Error {}
}
