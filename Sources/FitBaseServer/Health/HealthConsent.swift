import FitBaseCore
import HTTPTypes

/// What a user's `healthData` consent allows: uploading needs it in force; reading and deleting need it to have been
/// given once (data uploaded before a withdrawal stays readable and deletable). The one check of it, for REST and sync
/// alike, with its one refusal.
struct HealthConsent: Sendable {
    var upload: Bool
    var read: Bool

    /// The consent of a user's history of `healthData` answers, oldest first.
    init(history: [ConsentEvent]) {
        let answers = history.filter { $0.kind == .healthData }
        upload = answers.last?.granted == true
        read = answers.contains { $0.granted }
    }

    /// Whether it allows uploading (`true`) or reading and deleting (`false`).
    func allows(upload uploading: Bool) -> Bool { uploading ? upload : read }

    /// The answer to an access it does not allow: 403 `consent_required`.
    static func required(toUpload: Bool) -> Problem {
        Problem(
            .forbidden, code: .consentRequired,
            detail: (toUpload ? "Uploading health data" : "Health data") + " needs the healthData consent: POST /v1/me/consents {kind: healthData, granted: true}."
        )
    }
}
