#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an admin uploads for a workout.
public enum WorkoutMediaKind: String, Sendable, CaseIterable, Codable {
    /// A JPEG, PNG or HEIC image, cleaned as profile photos are.
    case thumbnail
    /// An MP4 or QuickTime video, streamed to the store.
    case video
}

/// The sizes a profile photo is served in.
public enum PhotoSize: String, Sendable, CaseIterable, Codable {
    /// At most ``thumbnailMaxSide`` pixels a side, for lists and avatars (the photo itself when it is no larger, or
    /// when the server cannot decode its format).
    case thumbnail
    /// The photo as uploaded, metadata removed.
    case full

    /// The longest side of a thumbnail, in pixels.
    public static let thumbnailMaxSide = 256

    /// The size of a thumbnail of a `width`×`height` image: the longest side brought down to ``thumbnailMaxSide``, the
    /// proportions kept, each side at least 1; `nil` when the image is already that small.
    public static func thumbnailDimensions(width: Int, height: Int) -> (width: Int, height: Int)? {
        let longest = max(width, height)
        guard width > 0, height > 0, longest > thumbnailMaxSide else { return nil }
        let scale = Double(thumbnailMaxSide) / Double(longest)
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }
}

/// An expiring link to a stored object: a FitBase `/v1/media/…` link or a presigned URL of an S3-compatible store.
/// Whoever holds it reads the object until ``expiresAt``; ask the server for a new one after that.
public struct MediaLink: Sendable, Equatable {
    public var url: URL
    public var expiresAt: Date

    /// Makes a link value.
    public init(url: URL, expiresAt: Date) {
        self.url = url
        self.expiresAt = expiresAt
    }

    /// How long before its expiry a link is renewed: a player starting a request just before the end would be refused.
    public static let renewalMargin: Duration = .seconds(30)

    /// Whether the link is still worth using at `now` (more than ``renewalMargin`` left).
    public func isUsable(at now: Date) -> Bool {
        expiresAt.timeIntervalSince(now) > Double(Self.renewalMargin.components.seconds)
    }

    /// How long from `now` until the link should be renewed (zero when it should be now).
    public func renewal(from now: Date) -> Duration {
        let seconds = expiresAt.timeIntervalSince(now) - Double(Self.renewalMargin.components.seconds)
        return seconds > 0 ? .milliseconds(Int64((seconds * 1000).rounded(.up))) : .zero
    }
}

/// What identifies one stored image in an image cache: the owner, the content's SHA-256 and the size served. A new
/// photo has a new digest, so a cache never shows a replaced one; the same bytes uploaded again hit the cache.
public struct MediaCacheKey: Hashable, Sendable, CustomStringConvertible {
    /// `photo-<user>-<digest>-<size>` or `workout-<workout>-<kind>-<digest>`: letters, digits and `-` only, usable as
    /// a file name.
    public let rawValue: String

    /// A key from its text (a cache file's name).
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The key of `size` of `owner`'s photo whose content hashes to `digest`.
    public static func photo(_ owner: UserID, digest: String, size: PhotoSize) -> MediaCacheKey {
        MediaCacheKey(rawValue: "photo-\(owner)-\(Self.safe(digest))-\(size.rawValue)")
    }

    /// The key of a workout's thumbnail or video whose content hashes to `digest`.
    public static func workout(_ workout: WorkoutID, kind: WorkoutMediaKind, digest: String) -> MediaCacheKey {
        MediaCacheKey(rawValue: "workout-\(workout)-\(kind.rawValue)-\(Self.safe(digest))")
    }

    public var description: String { rawValue }

    private static func safe(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.properties.isASCIIHexDigit || $0 == "-" }.map(Character.init)).lowercased()
    }
}

/// A user's profile photo as stored (the contract's `ProfilePhoto`): what each upload answers.
public struct ProfilePhotoInfo: Sendable, Equatable, Codable {
    /// Grows with each upload of the user's photo.
    public var version: Int64
    /// The SHA-256 of the stored photo (hex): changes exactly when the photo does.
    public var digest: String
    /// `image/jpeg`, `image/png` or `image/heic`.
    public var contentType: String
    public var width: Int
    public var height: Int
    /// The stored size in bytes, metadata removed.
    public var bytes: Int64
    public var updatedAt: Date

    /// Makes a photo value.
    public init(version: Int64, digest: String, contentType: String, width: Int, height: Int, bytes: Int64, updatedAt: Date) {
        self.version = version
        self.digest = digest
        self.contentType = contentType
        self.width = width
        self.height = height
        self.bytes = bytes
        self.updatedAt = updatedAt
    }
}

/// A user's profile photo in one size, with an expiring link to the image served for that size.
public struct ProfilePhotoLink: Sendable, Equatable {
    /// Whose photo it is.
    public var owner: UserID
    /// The photo as stored.
    public var photo: ProfilePhotoInfo
    /// The size the link serves: the one asked for, or ``PhotoSize/full`` when there is no thumbnail (the photo is
    /// already small, or the server cannot decode its format).
    public var size: PhotoSize
    /// The type and pixel size of the image the link serves.
    public var contentType: String
    public var width: Int
    public var height: Int
    public var link: MediaLink

    /// Makes a link value.
    public init(owner: UserID, photo: ProfilePhotoInfo, size: PhotoSize, contentType: String, width: Int, height: Int, link: MediaLink) {
        self.owner = owner
        self.photo = photo
        self.size = size
        self.contentType = contentType
        self.width = width
        self.height = height
        self.link = link
    }

    /// What an image cache keys this image on.
    public var cacheKey: MediaCacheKey { .photo(owner, digest: photo.digest, size: size) }
}

/// A workout's thumbnail or video with an expiring link to it.
public struct WorkoutMediaLink: Sendable, Equatable {
    public var workout: WorkoutID
    public var kind: WorkoutMediaKind
    /// Grows with each upload of this kind for the workout.
    public var version: Int64
    /// The SHA-256 of the stored file (hex).
    public var digest: String
    public var contentType: String
    public var bytes: Int64
    public var updatedAt: Date
    public var link: MediaLink

    /// Makes a link value.
    public init(
        workout: WorkoutID, kind: WorkoutMediaKind, version: Int64, digest: String, contentType: String, bytes: Int64, updatedAt: Date, link: MediaLink
    ) {
        self.workout = workout
        self.kind = kind
        self.version = version
        self.digest = digest
        self.contentType = contentType
        self.bytes = bytes
        self.updatedAt = updatedAt
        self.link = link
    }

    /// What an image cache keys this file on.
    public var cacheKey: MediaCacheKey { .workout(workout, kind: kind, digest: digest) }
}
