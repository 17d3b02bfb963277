import FitBaseAPI
import OpenAPIRuntime

/// `GET /metrics` on the API's port (``MetricsAccessMiddleware`` has checked the token before this runs).
protocol MetricsOperations: FeatureOperations { var metricsFeature: MetricsFeature { get } }

extension MetricsOperations {
    func getMetrics(_ input: Operations.GetMetrics.Input) async throws -> Operations.GetMetrics.Output {
        .ok(.init(body: .plainText(HTTPBody(try await metricsFeature.scrape()))))
    }
}
