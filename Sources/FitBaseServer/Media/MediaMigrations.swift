import SQLKit

/// `profile_photos`: the current photo of a user — its version and object key (`users/<id>/photo/<version>-<random>.<ext>`:
/// a new photo is a new object, so caches keyed by version never show a stale one), format, size in pixels and
/// bytes. The object's bytes are in the media store, never in the database.
struct CreateProfilePhotos: Migration {
    let name = "2026-11-26.media.create-profile-photos"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "profile_photos")
            .column("user_id", type: engine.uuid, .primaryKey(autoIncrement: false), .references("users", "id", onDelete: .cascade))
            .column("version", type: .bigint, .notNull)
            .column("format", type: .text, .notNull)
            .column("width", type: .int, .notNull)
            .column("height", type: .int, .notNull)
            .column("bytes", type: .bigint, .notNull)
            .column("updated_at", type: engine.instant, .notNull)
            .column("object_key", type: .text, .notNull)
            .run()
    }
}

/// `workout_media`: the thumbnail and the video an admin uploaded for a workout — the object's key
/// (`catalog/workouts/<id>/<kind>-<version>-<random>.<ext>`), its type and size. Deleting the workout deletes the row.
struct CreateWorkoutMedia: Migration {
    let name = "2026-11-26.media.create-workout-media"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "workout_media")
            .column("workout_id", type: engine.uuid, .notNull, .references("workouts", "id", onDelete: .cascade))
            .column("kind", type: .text, .notNull)
            .column("version", type: .bigint, .notNull)
            .column("object_key", type: .text, .notNull)
            .column("content_type", type: .text, .notNull)
            .column("bytes", type: .bigint, .notNull)
            .column("updated_at", type: engine.instant, .notNull)
            .primaryKey("workout_id", "kind")
            .run()
    }
}

/// `profile_photos` gains the photo's SHA-256 (`digest`, hex: what image caches key on — the version starts again at
/// 1 after a removal, the digest changes exactly when the image does) and its thumbnail's object and size
/// (`thumbnail_key`, null when the photo is small enough already or its format could not be decoded: the photo is
/// then served for both sizes). Rows from before have neither; their digest is the SHA-256 of their object key.
struct AddProfilePhotoThumbnails: Migration {
    let name = "2026-11-26.media.add-profile-photo-thumbnails"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "profile_photos").column("digest", type: .text).run()
        try await database.alter(table: "profile_photos").column("thumbnail_key", type: .text).run()
        try await database.alter(table: "profile_photos").column("thumbnail_width", type: .int).run()
        try await database.alter(table: "profile_photos").column("thumbnail_height", type: .int).run()
    }
}

/// `workout_media` gains the file's SHA-256 (`digest`, hex), computed as the upload streams to the store. Rows from
/// before have none; their digest is the SHA-256 of their object key.
struct AddWorkoutMediaDigest: Migration {
    let name = "2026-11-26.media.add-workout-media-digest"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "workout_media").column("digest", type: .text).run()
    }
}
