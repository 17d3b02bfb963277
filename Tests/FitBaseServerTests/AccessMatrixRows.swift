import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import Yams

@testable import FitBaseServer

/// Every operation of the contract and what each kind of caller gets from it.
extension AccessMatrixTests {
    static let rows: [Row] = [
        Row(operationID: "getHealth", expected: everyone(.ok)) { _, _ in (.get, "/healthz", nil) },
        Row(operationID: "getReadiness", expected: everyone(.ok)) { _, _ in (.get, "/readyz", nil) },
        Row(operationID: "getOpenAPIDocument", expected: everyone(.ok)) { _, _ in (.get, "/openapi.yaml", nil) },
        Row(operationID: "getJWKS", expected: everyone(.ok)) { _, _ in (.get, "/.well-known/jwks.json", nil) },
        // Only the scraper's token opens it (the matrix app has one); no caller's access token is that token, an admin's neither.
        Row(operationID: "getMetrics", expected: everyone(.unauthorized)) { _, _ in (.get, "/metrics", nil) },
        // Only the owner has given the analytics consent.
        Row(operationID: "sendAnalyticsEvents", expected: consented(.ok)) { _, _ in
            (.post, "/v1/analytics/events", ["events": [["id": UUID().uuidString, "name": "screen_view", "occurredAt": "\(Date.now.formatted(.iso8601))", "properties": ["screen": "library"]]]])
        },
        // Remote config: everyone gets values (anonymous callers the defaults).
        Row(operationID: "getRemoteConfig", expected: everyone(.ok)) { _, _ in (.get, "/v1/config?appVersion=1.4.2&platform=ios&locale=de-AT", nil) },
        // App reports: signed in or not, nobody's data.
        Row(operationID: "sendAppReports", expected: everyone(.ok)) { _, _ in
            (.post, "/v1/reports", ["reports": [["id": UUID().uuidString, "kind": "trace", "occurredAt": "\(Date.now.formatted(.iso8601))", "appVersion": "1.4.2", "platform": "ios", "deviceModel": "iPhone15,2", "operation": "leaderboard.fetch", "durationMilliseconds": 840]]])
        },
        Row(operationID: "signUp", expected: everyone(.accepted)) { _, _ in
            (.post, "/v1/auth/signup", ["email": "new-\(UUID().uuidString.prefix(8))@example.com", "password": "a long enough secret"])
        },
        Row(operationID: "signIn", expected: everyone(.ok)) { fixture, _ in
            (.post, "/v1/auth/signin", ["email": fixture.owner.email, "password": fixture.owner.password])
        },
        Row(operationID: "refreshSession", expected: everyone(.ok)) { fixture, _ in
            let fresh = try await fixture.client.signIn(fixture.owner)
            return (.post, "/v1/auth/refresh", ["refreshToken": fresh.refreshToken])
        },
        Row(operationID: "signInWithApple", expected: everyone(.ok)) { _, _ in
            let sub = "matrix.\(UUID().uuidString)"
            return (.post, "/v1/auth/apple", ["identityToken": try await FakeIdentityProvider.appleToken(subject: sub, rawNonce: sub), "rawNonce": sub])
        },
        Row(operationID: "signInWithGoogle", expected: everyone(.ok)) { _, _ in
            let token = try await FakeIdentityProvider.googleToken(subject: UUID().uuidString, email: "g-\(UUID().uuidString.prefix(8))@example.com", nonce: nil)
            return (.post, "/v1/auth/google", ["idToken": token])
        },
        // Apple authenticates itself with the signed payload; a caller's bearer token neither helps nor hurts.
        Row(operationID: "receiveAppleNotification", expected: everyone(.ok)) { _, _ in
            (.post, "/v1/auth/apple/notifications", ["payload": try await FakeIdentityProvider.appleNotification(type: "email-enabled", subject: "unknown")])
        },
        // E-mailed links: the token is the credential, whoever presents it (made-up tokens are refused alike).
        Row(operationID: "requestEmailVerification", expected: signedIn(.accepted)) { _, _ in (.post, "/v1/auth/email/verification", nil) },
        Row(operationID: "verifyEmail", expected: everyone(.badRequest)) { _, _ in (.post, "/v1/auth/email/verify", ["token": "made-up"]) },
        Row(operationID: "requestPasswordReset", expected: everyone(.accepted)) { _, _ in
            (.post, "/v1/auth/password/forgot", ["email": "forgot-\(UUID().uuidString.prefix(8))@example.com"])
        },
        Row(operationID: "resetPassword", expected: everyone(.badRequest)) { _, _ in
            (.post, "/v1/auth/password/reset", ["token": "made-up", "newPassword": "a long enough secret"])
        },
        Row(operationID: "getEmailVerificationPage", expected: everyone(.badRequest)) { _, _ in (.get, "/auth/verify?token=made-up", nil) },
        Row(operationID: "submitEmailVerificationPage", expected: everyone(.badRequest), formEncoded: true) { _, _ in
            (.post, "/auth/verify", ["token": "made-up"])
        },
        Row(operationID: "getPasswordResetPage", expected: everyone(.badRequest)) { _, _ in (.get, "/auth/reset?token=made-up", nil) },
        Row(operationID: "submitPasswordResetPage", expected: everyone(.badRequest), formEncoded: true) { _, _ in
            (.post, "/auth/reset", ["token": "made-up", "newPassword": "a long enough secret", "confirmPassword": "a long enough secret"])
        },
        // Credentials of the caller's own account: every signed-in caller changes their own.
        Row(operationID: "changePassword", expected: signedIn(.noContent)) { fixture, caller in
            (.post, "/v1/me/password", ["currentPassword": fixture.password(caller), "newPassword": "a new long enough secret"])
        },
        Row(operationID: "changeEmail", expected: signedIn(.accepted)) { fixture, caller in
            (.post, "/v1/me/email", ["newEmail": "moved-\(UUID().uuidString.prefix(8))@example.com", "password": fixture.password(caller)])
        },
        // The catalog is open to everyone; managing it needs the admin role ("owner" is an ordinary user here).
        Row(operationID: "listWorkouts", expected: everyone(.ok)) { _, _ in (.get, "/v1/workouts?phase=luteal&q=flow", nil) },
        Row(operationID: "listFeaturedWorkouts", expected: everyone(.ok)) { _, _ in (.get, "/v1/workouts/featured", nil) },
        Row(operationID: "listWorkoutsForPhase", expected: everyone(.ok)) { _, _ in (.get, "/v1/workouts/phase/menstrual", nil) },
        Row(operationID: "getWorkout", expected: everyone(.ok)) { fixture, _ in (.get, "/v1/workouts/\(fixture.workoutID)", nil) },
        Row(operationID: "listPrograms", expected: everyone(.ok)) { _, _ in (.get, "/v1/programs", nil) },
        Row(operationID: "getProgram", expected: everyone(.ok)) { fixture, _ in (.get, "/v1/programs/\(fixture.programID)", nil) },
        Row(operationID: "createWorkout", expected: adminOnly(.created)) { _, _ in (.post, "/v1/admin/workouts", workoutBody) },
        Row(operationID: "replaceWorkout", expected: adminOnly(.ok)) { fixture, _ in
            (.put, "/v1/admin/workouts/\(fixture.workoutID)", workoutBody)
        },
        Row(operationID: "deleteWorkout", expected: adminOnly(.noContent)) { fixture, _ in
            (.delete, "/v1/admin/workouts/\(fixture.unusedWorkoutID)", nil)
        },
        // Cycle data is the caller's own: other users, admins included, cannot reach the owner's periods.
        Row(operationID: "logPeriod", expected: signedIn(.created)) { _, _ in
            (.post, "/v1/cycle/periods", ["startDate": LocalCalendar.today(in: nil).adding(days: -40).description])
        },
        Row(operationID: "updatePeriod", expected: ownerOnly(.ok)) { fixture, _ in
            (.put, "/v1/cycle/periods/\(fixture.periodID)", ["startDate": LocalCalendar.today(in: nil).adding(days: -11).description])
        },
        Row(operationID: "deletePeriod", expected: ownerOnly(.noContent)) { fixture, _ in (.delete, "/v1/cycle/periods/\(fixture.periodID)", nil) },
        Row(operationID: "getCycleHistory", expected: signedIn(.ok)) { _, _ in (.get, "/v1/cycle/history", nil) },
        Row(operationID: "logFertilitySignal", expected: signedIn(.created)) { _, _ in
            (.post, "/v1/cycle/signals", ["date": LocalCalendar.today(in: nil).adding(days: -1).description, "type": "basalBodyTemperature", "value": 36.5])
        },
        Row(operationID: "listFertilitySignals", expected: signedIn(.ok)) { _, _ in (.get, "/v1/cycle/signals", nil) },
        Row(operationID: "importHealthKitCycleSamples", expected: signedIn(.ok)) { _, _ in
            (.post, "/v1/cycle/healthkit", ["samples": [[
                "uuid": UUID().uuidString, "type": "HKCategoryTypeIdentifierOvulationTestResult",
                "date": LocalCalendar.today(in: nil).adding(days: -1).description, "value": 1,
            ]]])
        },
        Row(operationID: "deleteFertilitySignal", expected: ownerOnly(.noContent)) { fixture, _ in (.delete, "/v1/cycle/signals/\(fixture.signalID)", nil) },
        Row(operationID: "getCurrentCycle", expected: [.anonymous: .unauthorized, .otherUser: .notFound, .groupMember: .notFound, .admin: .notFound, .owner: .ok]) { _, _ in
            (.get, "/v1/cycle/current", nil)
        },
        Row(operationID: "getCyclePredictions", expected: [.anonymous: .unauthorized, .otherUser: .notFound, .groupMember: .notFound, .admin: .notFound, .owner: .ok]) { _, _ in
            (.get, "/v1/cycle/predictions", nil)
        },
        Row(operationID: "logWorkout", expected: signedIn(.created)) { fixture, _ in
            (.post, "/v1/history", ["workoutId": fixture.workoutID, "completedAt": "2026-01-05T10:00:00Z", "duration": 30])
        },
        Row(operationID: "listHistory", expected: signedIn(.ok)) { _, _ in (.get, "/v1/history", nil) },
        Row(operationID: "getHistoryStats", expected: signedIn(.ok)) { _, _ in (.get, "/v1/history/stats", nil) },
        Row(operationID: "deleteWorkoutLog", expected: ownerOnly(.noContent)) { fixture, _ in (.delete, "/v1/history/\(fixture.logID)", nil) },
        Row(operationID: "listPlans", expected: signedIn(.ok)) { _, _ in (.get, "/v1/plans", nil) },
        // A free account keeps one plan: the owner already has one, so a second needs the pro tier.
        Row(operationID: "createPlan", expected: [.anonymous: .unauthorized, .otherUser: .created, .groupMember: .created, .admin: .created, .owner: .init(code: 402)]) { fixture, _ in
            (.post, "/v1/plans", planBody(fixture.workoutID))
        },
        Row(operationID: "getPlan", expected: ownerOnly(.ok)) { fixture, _ in (.get, "/v1/plans/\(fixture.planID)", nil) },
        Row(operationID: "replacePlan", expected: ownerOnly(.ok)) { fixture, _ in (.put, "/v1/plans/\(fixture.planID)", planBody(fixture.workoutID)) },
        Row(operationID: "deletePlan", expected: ownerOnly(.noContent)) { fixture, _ in (.delete, "/v1/plans/\(fixture.planID)", nil) },
        // Progression is premium's: the (free) owner gets 402; nobody else learns the plan exists. PlanProgressionEndpointTests
        // covers the premium owner and an admin's own plan.
        Row(operationID: "getPlanProgression", expected: ownerOnly(.init(code: 402))) { fixture, _ in (.get, "/v1/plans/\(fixture.planID)/progression?week=1", nil) },
        // Recommendations are always the caller's own (there is no way to name another user's).
        Row(operationID: "getTodayRecommendations", expected: signedIn(.ok)) { _, _ in (.get, "/v1/recommendations/today?energy=low", nil) },
        Row(operationID: "refreshRecommendations", expected: signedIn(.ok)) { _, _ in (.post, "/v1/recommendations/refresh", nil) },
        Row(operationID: "getWeekRecommendations", expected: signedIn(.ok)) { _, _ in (.get, "/v1/recommendations/week", nil) },
        // The feed is always the caller's own; SyncTests checks no other user's change ever shows.
        Row(operationID: "getSyncChanges", expected: signedIn(.ok)) { _, _ in (.get, "/v1/sync/changes?limit=10", nil) },
        Row(operationID: "pushSyncMutations", expected: signedIn(.ok)) { _, _ in (.post, "/v1/sync/push", ["mutations": []]) },
        // Billing: the caller's own status; a claimed App Store subscription is no one else's; the stores' webhooks
        // authenticate with their signatures, not with a bearer token.
        Row(operationID: "getSubscription", expected: signedIn(.ok)) { _, _ in (.get, "/v1/subscription", nil) },
        Row(operationID: "getFeatures", expected: signedIn(.ok)) { _, _ in (.get, "/v1/features", nil) },
        // The products the stores sell: a paywall may show before sign-in, and the list names no one.
        Row(operationID: "listBillingProducts", expected: everyone(.ok)) { _, _ in (.get, "/v1/billing/products", nil) },
        Row(operationID: "submitAppStoreTransaction", expected: [.anonymous: .unauthorized, .otherUser: .conflict, .groupMember: .conflict, .admin: .conflict, .owner: .ok]) { fixture, _ in
            (.post, "/v1/subscription/appstore/transactions", ["signedTransaction": fixture.claimedTransaction])
        },
        Row(operationID: "receiveAppStoreNotification", expected: everyone(.ok)) { _, _ in
            (.post, "/v1/webhooks/appstore", ["signedPayload": try BillingFixture.signer.notification(type: "TEST")])
        },
        Row(operationID: "receiveStripeEvent", expected: everyone(.ok), signature: { [StripeWebhookMiddleware.signatureHeader: BillingFixture.stripeSignature($0)] }) { _, _ in
            (.post, "/v1/webhooks/stripe", ["id": "evt_\(UUID().uuidString.prefix(12))", "type": "customer.updated", "created": Int(Date.now.timeIntervalSince1970), "data": ["object": ["id": "cus_matrix"]]])
        },
        // Health data is the caller's own and needs their healthData consent: without it, 403 before anything is read.
        Row(operationID: "uploadHealthSamples", expected: consented(.ok)) { _, _ in
            (.post, "/v1/health/samples", ["samples": [HealthTests.sample("heartRate", start: "2026-11-20T08:00:00Z", ["value": 70])]])
        },
        Row(operationID: "listHealthSamples", expected: consented(.ok)) { _, _ in (.get, "/v1/health/samples?type=heartRate", nil) },
        Row(operationID: "getHealthSummary", expected: consented(.ok)) { _, _ in (.get, "/v1/health/summary?type=heartRate", nil) },
        Row(operationID: "getHealthOverview", expected: consented(.ok)) { _, _ in (.get, "/v1/health/overview", nil) },
        Row(operationID: "deleteHealthSample", expected: consented(.noContent)) { fixture, _ in (.delete, "/v1/health/samples/\(fixture.sampleID)", nil) },
        Row(operationID: "listMyAuditEntries", expected: signedIn(.ok)) { _, _ in (.get, "/v1/me/audit", nil) },
        // Groups: members see their group; its admin (the owner) manages it; one group per user.
        Row(operationID: "createGroup", expected: [.anonymous: .unauthorized, .otherUser: .created, .groupMember: .conflict, .admin: .created, .owner: .conflict]) { _, _ in
            (.post, "/v1/groups", ["name": "Matrix Crew", "timeZone": "Asia/Kolkata"])
        },
        Row(operationID: "getGroup", expected: groupOnly(member: .ok, owner: .ok)) { fixture, _ in (.get, "/v1/groups/\(fixture.groupID)", nil) },
        Row(operationID: "deleteGroup", expected: groupOnly(member: .forbidden, owner: .noContent)) { fixture, _ in (.delete, "/v1/groups/\(fixture.groupID)", nil) },
        Row(operationID: "listGroupMembers", expected: groupOnly(member: .ok, owner: .ok)) { fixture, _ in (.get, "/v1/groups/\(fixture.groupID)/members", nil) },
        Row(operationID: "removeGroupMember", expected: groupOnly(member: .forbidden, owner: .noContent)) { fixture, _ in
            (.delete, "/v1/groups/\(fixture.groupID)/members/\(fixture.groupMember.id)", nil)
        },
        Row(operationID: "leaveGroup", expected: groupOnly(member: .noContent, owner: .noContent)) { fixture, _ in (.post, "/v1/groups/\(fixture.groupID)/leave", nil) },
        Row(operationID: "createGroupInvite", expected: groupOnly(member: .created, owner: .created)) { fixture, _ in (.post, "/v1/groups/\(fixture.groupID)/invites", nil) },
        // Invites are listed for the admin only (metadata); one is revoked by id by its creator (the owner) or the admin.
        Row(operationID: "listGroupInvites", expected: groupOnly(member: .forbidden, owner: .ok)) { fixture, _ in (.get, "/v1/groups/\(fixture.groupID)/invites", nil) },
        Row(operationID: "revokeGroupInvite", expected: groupOnly(member: .forbidden, owner: .noContent)) { fixture, _ in
            (.delete, "/v1/groups/\(fixture.groupID)/invites/\(fixture.inviteID)", nil)
        },
        // Everyone's own group: the owner's and the member's are the fixture's group, the others are in none.
        Row(operationID: "getCurrentGroup", expected: groupOnly(member: .ok, owner: .ok)) { _, _ in (.get, "/v1/groups/current", nil) },
        Row(operationID: "listGroupChallenges", expected: groupOnly(member: .ok, owner: .ok)) { fixture, _ in (.get, "/v1/groups/\(fixture.groupID)/challenges", nil) },
        Row(operationID: "previewInvite", expected: signedIn(.ok)) { fixture, _ in (.get, "/v1/invites/\(fixture.inviteToken)", nil) },
        Row(operationID: "revokeInvite", expected: [.anonymous: .unauthorized, .otherUser: .forbidden, .groupMember: .forbidden, .admin: .forbidden, .owner: .noContent]) { fixture, _ in
            (.delete, "/v1/invites/\(fixture.inviteToken)", nil)
        },
        // Anyone signed in holding the token may join (a member accepting again changes nothing).
        Row(operationID: "acceptInvite", expected: signedIn(.ok)) { fixture, _ in (.post, "/v1/invites/\(fixture.inviteToken)/accept", nil) },
        // The invite page shows the group's name and inviter to whoever holds the link; a bearer token changes nothing.
        Row(operationID: "getInvitePage", expected: everyone(.ok)) { fixture, _ in (.get, "/group/invite/\(fixture.inviteToken)", nil) },
        Row(operationID: "getAppSiteAssociation", expected: everyone(.ok)) { _, _ in (.get, "/.well-known/apple-app-site-association", nil) },
        Row(operationID: "getCurrentChallenges", expected: groupOnly(member: .ok, owner: .ok)) { fixture, _ in (.get, "/v1/groups/\(fixture.groupID)/challenges/current", nil) },
        Row(operationID: "getLeaderboard", expected: groupOnly(member: .ok, owner: .ok)) { fixture, _ in (.get, "/v1/groups/\(fixture.groupID)/leaderboards/streak", nil) },
        // The stream never ends, so this row shows only that it needs a caller (a malformed Last-Event-ID ends it with
        // 400 once the caller is known); EventStreamTests streams for real and checks topic isolation.
        Row(operationID: "streamEvents", expected: [.anonymous: .unauthorized, .otherUser: .badRequest, .groupMember: .badRequest, .admin: .badRequest, .owner: .badRequest]) { _, _ in
            (.get, "/v1/events?lastEventId=not-an-id", nil)
        },
        // Notifications are the recipient's own.
        Row(operationID: "listNotifications", expected: signedIn(.ok)) { _, _ in (.get, "/v1/notifications", nil) },
        Row(operationID: "markNotificationRead", expected: ownerOnly(.noContent)) { fixture, _ in (.post, "/v1/notifications/\(fixture.notificationID)/read", nil) },
        Row(operationID: "markAllNotificationsRead", expected: signedIn(.noContent)) { _, _ in (.post, "/v1/notifications/read-all", nil) },
        Row(operationID: "getMe", expected: signedIn(.ok)) { _, _ in (.get, "/v1/me", nil) },
        Row(operationID: "listSessions", expected: signedIn(.ok)) { _, _ in (.get, "/v1/me/sessions", nil) },
        // Sessions are reachable only through their owner's /me: another user, even an admin, gets 404.
        Row(
            operationID: "deleteSession",
            expected: [.anonymous: .unauthorized, .otherUser: .notFound, .groupMember: .notFound, .admin: .notFound, .owner: .noContent]
        ) { fixture, _ in (.delete, "/v1/me/sessions/\(fixture.ownerSecondSession)", nil) },
        // Devices are reached through their owner's /me only: anyone signed in registers a token of their own; another
        // user, even an admin, cannot delete the owner's (404, as if it did not exist).
        Row(operationID: "listDevices", expected: signedIn(.ok)) { _, _ in (.get, "/v1/me/devices", nil) },
        Row(operationID: "registerDevice", expected: signedIn(.created)) { _, _ in
            (.put, "/v1/me/devices/\(deviceToken())", ["platform": "ios", "environment": "production", "bundleId": "com.example.fit"])
        },
        Row(operationID: "deleteDevice", expected: ownerOnly(.noContent)) { fixture, _ in
            let token = deviceToken()
            try #require(try await fixture.client.registerDevice(token, for: fixture.owner).status == .created)
            return (.delete, "/v1/me/devices/\(token)", nil)
        },
        // Media: each caller replaces or removes their own photo; a photo is seen by its owner and the owner's group
        // (anyone else gets 404, as if there were none); a media link is its own credential, whoever presents it.
        Row(operationID: "uploadMyPhoto", expected: signedIn(.ok), rawBody: ("image/jpeg", TestImages.jpeg())) { _, _ in
            (.put, "/v1/me/photo", nil)
        },
        Row(operationID: "deleteMyPhoto", expected: signedIn(.noContent)) { _, _ in (.delete, "/v1/me/photo", nil) },
        Row(operationID: "getUserPhoto", expected: groupOnly(member: .ok, owner: .ok)) { fixture, _ in
            _ = try await ownerPhotoLink(fixture)
            return (.get, "/v1/users/\(fixture.owner.id)/photo", nil)
        },
        Row(operationID: "getMedia", expected: everyone(.ok)) { fixture, _ in
            let url = try await ownerPhotoLink(fixture)
            return (.get, String(try #require(url.range(of: "/v1/media/").map { url[$0.lowerBound...] })), nil)
        },
        // Workout media: admins upload it; a premium workout's video link goes only to callers entitled now (the
        // owner's subscription has lapsed; admins may watch everything).
        Row(operationID: "uploadWorkoutMedia", expected: adminOnly(.ok), rawBody: ("image/jpeg", TestImages.jpeg())) { fixture, _ in
            (.put, "/v1/admin/workouts/\(fixture.workoutID)/media/thumbnail", nil)
        },
        Row(
            operationID: "getWorkoutMedia",
            expected: [.anonymous: .unauthorized, .otherUser: .init(code: 402), .groupMember: .init(code: 402), .admin: .ok, .owner: .init(code: 402)]
        ) { fixture, _ in
            let uploaded = try await CatalogMediaTests.upload(
                fixture.client, fixture.unusedWorkoutID, "video", CatalogMediaTests.video(100), token: fixture.admin.accessToken)
            try #require(uploaded.status == .ok)
            return (.get, "/v1/workouts/\(fixture.unusedWorkoutID)/media/video", nil)
        },
        Row(operationID: "updateMe", expected: signedIn(.ok)) { _, _ in (.patch, "/v1/me", ["fitnessLevel": "beginner"]) },
        Row(operationID: "exportMe", expected: signedIn(.ok)) { _, _ in (.get, "/v1/me/export", nil) },
        Row(operationID: "listConsents", expected: signedIn(.ok)) { _, _ in (.get, "/v1/me/consents", nil) },
        Row(operationID: "recordConsent", expected: signedIn(.created)) { _, _ in
            (.post, "/v1/me/consents", ["kind": "terms", "version": "2026-01", "granted": true])
        },
        Row(operationID: "signOut", expected: signedIn(.noContent)) { _, _ in (.post, "/v1/auth/signout", nil) },
        // Each caller deletes only their own account; the owner goes last, so the others' deletions prove nothing
        // of the owner's was touched (the owner's own deletion still succeeds).
        Row(operationID: "deleteMe", expected: signedIn(.noContent)) { _, _ in (.delete, "/v1/me", nil) },
    ]

    /// Uploads a photo for the fixture's owner and returns a link to it.
    static func ownerPhotoLink(_ fixture: Fixture) async throws -> String {
        let uploaded = try await ProfilePhotoTests.upload(fixture.client, TestImages.png(), token: fixture.owner.accessToken)
        try #require(uploaded.status == .ok)
        return try #require(try await ProfilePhotoTests.link(fixture.client, of: fixture.owner.id, token: fixture.owner.accessToken)["url"] as? String)
    }
}
