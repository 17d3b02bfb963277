import FitBaseCore
import Foundation
import Logging
import NIOCore

/// Profile photos: upload (checked, cleaned, stored as a new object with its thumbnail), removal, and expiring links
/// to either size for the owner and the members of the owner's group.
///
/// Thumbnails are made at upload, not on first request: the photo is in memory and checked then, a read stays a link
/// (no decoding a group member's request could set off, and nothing to race when two members ask at once), and both
/// objects live under the user's prefix, so the account's deletion lists and removes them together.
struct ProfilePhotos: Sendable {
    let store: ProfilePhotoStore
    let storage: any MediaStorage
    let inspector: ImageInspector
    let thumbnailer: ContainedThumbnailer
    let links: MediaLinks
    let linkLifetime: Duration
    let maxBytes: Int
    let database: Database
    let logger: Logger

    /// Checks `bytes`, stores the cleaned image as the user's new photo and deletes the previous one's object. Bad
    /// input throws a problem naming `photo`; nothing is stored then.
    func upload(_ bytes: [UInt8], for user: UserID, now: Date) async throws -> ProfilePhoto {
        guard bytes.count <= maxBytes else { throw Problem.payloadTooLarge(limit: maxBytes) }
        let image: InspectedImage
        do {
            image = try inspector.inspect(bytes)
        } catch {
            throw Problem.validationFailed([.init(field: "photo", message: Self.message(for: error))])
        }
        let small: EncodedImage?
        do {
            small = try await thumbnailer.thumbnail(of: image)
        } catch {
            throw Problem.validationFailed([.init(field: "photo", message: Self.message(for: error))])
        }
        var version = try await store.nextVersion(of: user)
        guard let key = ProfilePhoto.newKey(of: user, version: version, format: image.format) else {
            throw MediaStorageError.storeFailed("no object key for user \(user)")
        }
        let stored = try await storage.put(key, contentType: image.format.contentType, body: WholeBody(ByteBuffer(bytes: image.bytes)))
        var thumbnail: ProfilePhoto.Thumbnail?
        do {
            if let small, let thumbnailKey = ProfilePhoto.thumbnailKey(for: key, format: small.format) {
                _ = try await storage.put(thumbnailKey, contentType: small.format.contentType, body: WholeBody(ByteBuffer(bytes: small.bytes)))
                thumbnail = .init(key: thumbnailKey, format: small.format, width: small.width, height: small.height)
            }
            // A concurrent upload of the same user may record its version first: this one then takes the next.
            for _ in 0..<5 {
                let photo = ProfilePhoto(
                    user: user, version: version, format: image.format, width: image.width, height: image.height, bytes: stored.size,
                    updatedAt: now, digest: MediaDigest.of(image.bytes), key: key, thumbnail: thumbnail)
                do {
                    if let previous = try await store.record(photo) { await deleteObjects(previous.keys) }
                    return photo
                } catch is ProfilePhotoStore.Superseded {
                    version = try await store.nextVersion(of: user)
                }
            }
            throw MediaStorageError.storeFailed("too many concurrent uploads of one photo")
        } catch {
            await deleteObjects([key] + (thumbnail.map { [$0.key] } ?? []))
            throw error
        }
    }

    /// Removes the user's photo and its object.
    func remove(of user: UserID) async throws {
        if let previous = try await store.remove(user) { await deleteObjects(previous.keys) }
    }

    /// The photo of `owner` and a link valid from `now` to it in `size` (the photo itself when it has no thumbnail),
    /// when `caller` may see it (the owner, or a member of the owner's group); `nil` otherwise, as for a user without a
    /// photo.
    func link(to owner: UserID, for caller: UserID, size: PhotoSize, now: Date) async throws -> PhotoLink? {
        if caller != owner {
            let (theirs, mine) = try await database.withConnection { db in
                (try await GroupStore.membership(of: owner, on: db), try await GroupStore.membership(of: caller, on: db))
            }
            guard let theirs, let mine, theirs.group == mine.group else { return nil }
        }
        guard let photo = try await store.photo(of: owner) else { return nil }
        let served =
            if size == .thumbnail, let thumbnail = photo.thumbnail {
                (key: thumbnail.key, size: PhotoSize.thumbnail, format: thumbnail.format, width: thumbnail.width, height: thumbnail.height)
            } else {
                (key: photo.key, size: PhotoSize.full, format: photo.format, width: photo.width, height: photo.height)
            }
        let expiry = now.addingTimeInterval(Double(linkLifetime.components.seconds))
        let url = storage.presignedURL(for: served.key, expires: linkLifetime, now: now) ?? links.url(for: served.key, expiry: expiry)
        return PhotoLink(photo: photo, size: served.size, format: served.format, width: served.width, height: served.height, url: url, expiresAt: expiry)
    }

    /// A photo, the size a link serves and the link.
    struct PhotoLink {
        let photo: ProfilePhoto
        let size: PhotoSize
        let format: ImageFormat
        let width: Int
        let height: Int
        let url: String
        let expiresAt: Date
    }

    /// Deletes objects no row names any more; a failure is logged (the object stays under the user's prefix, which
    /// the account's deletion clears).
    private func deleteObjects(_ keys: [MediaKey]) async {
        for key in keys {
            do {
                try await storage.delete(key)
            } catch {
                logger.warning("could not delete a replaced media object", metadata: ["key": "\(key)", "error": "\(error)"])
            }
        }
    }

    static func message(for problem: ImageProblem) -> String {
        switch problem {
        case .unsupported: "is not a JPEG, PNG or HEIC image"
        case .truncated(let reason): "is cut off or damaged: \(reason)"
        case .tooLarge(let width, let height, let limit): "is \(width)×\(height) pixels; at most \(limit) pixels a side are accepted"
        case .decodedTooLarge(let width, let height): "decodes to \(width)×\(height) pixels, more than may be decoded"
        case .notDecodable(let reason): "could not be decoded: \(reason)"
        }
    }
}
