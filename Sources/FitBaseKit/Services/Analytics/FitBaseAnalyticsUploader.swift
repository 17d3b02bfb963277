import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// Sends analytics batches to the FitBase server (``sendAnalyticsEvents``), a hundred events a request at most.
///
/// Put it under a ``BatchingAnalyticsSink`` behind ``ConsentGatedAnalytics``: the server stores events only from users
/// who gave the `analytics` consent. Each record's id goes with it, so a batch sent again after a lost answer is counted
/// once. A batch the server refuses as invalid (400) or without consent (403) is dropped — sending it again would be
/// refused again; any other failure throws, and the sink keeps the batch for its next try.
public struct FitBaseAnalyticsUploader: AnalyticsUploader {
    private let client: FitBaseClient

    /// An uploader through `client` (signed in as the user whose events these are).
    public init(client: FitBaseClient) {
        self.client = client
    }

    public func upload(_ batch: [AnalyticsRecord]) async throws {
        for start in stride(from: 0, to: batch.count, by: ProductEventRules.maximumBatch) {
            let events = batch[start..<min(batch.count, start + ProductEventRules.maximumBatch)].map { record in
                Components.Schemas.AnalyticsEventInput(
                    id: record.id.uuidString.lowercased(), name: record.name, occurredAt: record.timestamp,
                    properties: record.parameters.isEmpty ? nil : RecordJSON(fields: record.parameters.mapValues { .string($0) })
                )
            }
            let client = self.client
            do throws(FitBaseError) {
                _ = try await client.call { try await client.api.sendAnalyticsEvents(body: .json(.init(events: events))).ok }
            } catch {
                // Refused as invalid or without consent: sending it again would be refused again.
                guard error.statusCode == 400 || error.statusCode == 403 else { throw error }
            }
        }
    }
}
