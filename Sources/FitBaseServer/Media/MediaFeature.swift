import Foundation
import HTTPTypes
import Logging

/// Media: the store (the data directory, or an S3-compatible bucket), the expiring links to what it holds, and
/// profile photos.
struct MediaFeature: ServerFeature {
    let storage: any MediaStorage
    let links: MediaLinks
    let photos: ProfilePhotos
    let configuration: MediaConfiguration

    init(_ foundation: ServerFoundation) {
        let configuration = foundation.configuration.media
        self.configuration = configuration
        switch configuration.store {
        case .local(let directory):
            storage = LocalMediaStorage(root: directory ?? Self.defaultDirectory(in: foundation.configuration.dataDirectory))
        case .s3(let location, let credentials):
            storage = S3MediaStorage(location: location, credentials: credentials, client: foundation.httpClient)
        }
        links = MediaLinks(secret: foundation.masterKey.derivedKey(for: "media links"), baseURL: foundation.configuration.publicURL)
        photos = ProfilePhotos(
            store: ProfilePhotoStore(database: foundation.database), storage: storage,
            inspector: ImageInspector(maxPixels: configuration.photoMaxPixels), links: links, linkLifetime: configuration.linkLifetime,
            maxBytes: configuration.photoMaxBytes, database: foundation.database, logger: foundation.logger
        )
    }

    var dataOwners: [any AccountDataOwner] { [ProfilePhotoOwner(store: photos.store, storage: storage)] }

    /// Clears uploads a crash cut off (the data directory keeps them apart until they are complete).
    func start() async throws {
        if let local = storage as? LocalMediaStorage { try await local.removeAbandonedUploads() }
    }

    /// The routes whose bodies are larger than `FITBASE_MAX_BODY_BYTES` allows: a profile photo.
    static func bodyLimits(_ configuration: MediaConfiguration) -> [BodyLimitMiddleware.Exception] {
        [.init(method: .put, path: "/v1/me/photo", maxBytes: configuration.photoMaxBytes)]
    }

    /// `<data dir>/media`.
    static func defaultDirectory(in dataDirectory: String) -> String {
        URL(fileURLWithPath: dataDirectory).appendingPathComponent("media").path
    }
}
