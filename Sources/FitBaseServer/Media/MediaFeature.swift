import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging

/// Media: the store (the data directory, or an S3-compatible bucket), the expiring links to what it holds, profile
/// photos, and workout artwork and video.
struct MediaFeature: ServerFeature {
    let storage: any MediaStorage
    let links: MediaLinks
    let photos: ProfilePhotos
    let catalogMedia: CatalogMedia
    let configuration: MediaConfiguration

    init(_ foundation: ServerFoundation, catalog: CatalogFeature, billing: BillingFeature) {
        let configuration = foundation.configuration.media
        self.configuration = configuration
        let storage = Self.storage(for: foundation)
        self.storage = storage
        links = MediaLinks(secret: foundation.masterKey.derivedKey(for: "media links"), baseURL: foundation.configuration.publicURL)
        photos = ProfilePhotos(
            store: ProfilePhotoStore(database: foundation.database), storage: storage,
            inspector: ImageInspector(maxPixels: configuration.photoMaxPixels), thumbnailer: ContainedThumbnailer(settings: configuration.imageWorkerSettings), links: links,
            linkLifetime: configuration.linkLifetime,
            maxBytes: configuration.photoMaxBytes, database: foundation.database, logger: foundation.logger
        )
        // A deleted workout's rows go with it (cascade); its files go through the outbox, queued in the deleting
        // transaction: deleted once it commits, listed from the store, and retried while the store fails (a crash or
        // an S3 outage leaves nothing behind).
        let outbox = foundation.outbox
        catalog.deletions.observe { workout, now, db in
            try await outbox.enqueue(.mediaDeletion(prefix: WorkoutMediaUploads.prefix(of: workout), of: workout), user: nil, now: now, on: db)
        }
        for warning in Self.startupWarnings(
            engine: foundation.database.engine, store: configuration.store, missingLibraries: SystemImageLibraries.shared.missing)
        {
            foundation.logger.warning("\(warning)")
        }
        catalogMedia = CatalogMedia(
            uploads: WorkoutMediaUploads(
                store: WorkoutMediaStore(database: foundation.database), catalog: catalog.store, storage: storage,
                inspector: ImageInspector(maxPixels: configuration.photoMaxPixels), configuration: configuration, logger: foundation.logger
            ),
            links: links, entitlements: billing.entitlements
        )
    }

    var dataOwners: [any AccountDataOwner] { [ProfilePhotoOwner(store: photos.store, storage: storage)] }

    /// What start-up says about the media set-up: media in the data directory while the database is PostgreSQL (the
    /// set-up for several instances, which would each keep their own files: a photo uploaded through one is missing
    /// from the others), and the image libraries thumbnails need but this machine lacks.
    static func startupWarnings(engine: DatabaseEngine, store: MediaConfiguration.Store, missingLibraries: [String]) -> [String] {
        var warnings: [String] = []
        if engine == .postgres, case .local = store {
            warnings.append(
                "media is kept in this instance's data directory: with more than one instance, each has its own files and a "
                    + "photo or video uploaded through one is missing from the others; set FITBASE_STORAGE_URL to an S3-compatible store")
        }
        if !missingLibraries.isEmpty {
            warnings.append(
                "photo thumbnails: missing \(missingLibraries.joined(separator: ", ")); photos of that format are served full-size for size=thumbnail")
        }
        return warnings
    }

    /// Clears uploads a crash cut off (the data directory keeps them apart until they are complete).
    func start() async throws {
        if let local = storage as? LocalMediaStorage { try await local.removeAbandonedUploads() }
    }

    /// The routes whose bodies are larger than `FITBASE_MAX_BODY_BYTES` allows: a profile photo (collected, as for
    /// every route), and a workout's media (left to its handler, which streams it to the store).
    static func bodyLimits(_ configuration: MediaConfiguration) -> [BodyLimitMiddleware.Exception] {
        [
            .init(maxBytes: configuration.photoMaxBytes) { method, path in method == .put && path == "/v1/me/photo" },
            .init(maxBytes: Int(configuration.videoMaxBytes), streamed: true) { method, path in
                method == .put && path.hasPrefix("/v1/admin/workouts/") && path.contains("/media/")
            },
        ]
    }

    /// The store the configuration names, over the foundation's HTTP client.
    static func storage(for foundation: ServerFoundation) -> any MediaStorage {
        storage(for: foundation.configuration, httpClient: foundation.httpClient)
    }

    /// The store `configuration` names, over `httpClient` (S3).
    static func storage(for configuration: ServerConfiguration, httpClient: HTTPClient) -> any MediaStorage {
        switch configuration.media.store {
        case .local(let directory):
            LocalMediaStorage(root: directory ?? defaultDirectory(in: configuration.dataDirectory))
        case .s3(let location, let credentials):
            S3MediaStorage(location: location, credentials: credentials, client: httpClient)
        }
    }

    /// `<data dir>/media`.
    static func defaultDirectory(in dataDirectory: String) -> String {
        URL(fileURLWithPath: dataDirectory).appendingPathComponent("media").path
    }
}
