import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOFoundationCompat

/// Checks `Stripe-Signature` of `POST /v1/webhooks/stripe` on the body's exact bytes, before anything parses them,
/// and hands the verified bytes to the operation through ``StripeWebhookScope``. Other routes pass straight through.
struct StripeWebhookMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext
    /// `nil` when `FITBASE_STRIPE_WEBHOOK_SECRETS` is unset: the webhook answers 503.
    let verifier: StripeSignatureVerifier?
    let maxBytes: Int
    /// The signed timestamp must be within the verifier's tolerance of this clock's time.
    let clock: ServerClock
    /// Where a refused event is logged (``WebhookFailureLog``), for the console.
    let database: Database

    static let path = "/v1/webhooks/stripe"

    /// The route it wraps: Stripe's webhook.
    static func applies(path: String, method: HTTPRequest.Method) -> Bool {
        method == .post && path == Self.path
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .post, request.uri.path == Self.path else { return try await next(request, context) }
        var request = request
        let payload = try await WebhookFailureLog.recording(.stripe, in: database, now: clock.now) { [verifier, maxBytes, clock] in
            guard let verifier else {
                throw Problem(.serviceUnavailable, code: .stripeNotConfigured, detail: "Set FITBASE_STRIPE_WEBHOOK_SECRETS to receive Stripe events.")
            }
            let payload = Data(buffer: try await request.collectBody(upTo: maxBytes))
            do {
                try verifier.verify(payload: payload, header: request.headers[Self.signatureHeader], now: clock.now)
            } catch let error as StripeSignatureError {
                throw Problem(.badRequest, code: error.code, title: "Stripe signature not verified", detail: "Stripe-Signature: \(error)")
            }
            return payload
        }
        return try await StripeWebhookScope.$verifiedPayload.withValue(payload) {
            try await next(request, context)
        }
    }

    static let signatureHeader = HTTPField.Name("Stripe-Signature")!
}

/// The verified body of the Stripe webhook request being handled.
enum StripeWebhookScope {
    @TaskLocal static var verifiedPayload: Data?
}
