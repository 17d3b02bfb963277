import FitBaseClient
import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct ProfileModelTests {
    @Test func editsAndSavesTheProfile() async {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.consents, .profile, .saveProfile)
        let model = ProfileModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.profile?.profile.displayName == "Ana" && !model.hasChanges)
        model.draft.displayName = "Ana María"
        model.draft.goals = [.reduceStress]
        #expect(model.hasChanges)
        await model.save()
        #expect(model.profile?.profile.displayName == "Ana María" && !model.hasChanges && model.error == nil)
    }

    @Test func theFormIsChecked() async {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.consents, .profile)
        let model = ProfileModel(dependencies: fixture.dependencies)
        await model.load()
        model.draft.displayName = " "
        model.draft.averageCycleLength = 50
        model.draft.averagePeriodLength = 11
        await model.save()
        #expect(model.fieldErrors.keys.sorted() == ["averageCycleLength", "averagePeriodLength", "displayName"])
        #expect(fixture.fakes.profile.knobs.callCount(.saveProfile) == 0)
        model.draft = model.profile!.profile
        model.draft.displayName = String(repeating: "a", count: 101)
        #expect(model.problems()["displayName"] != nil)
    }

    @Test func theShareToggleAndConsents() async {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.consents, .profile, .recordConsent, .setShareWorkoutData)
        let model = ProfileModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.sharesWorkoutData && !model.isGranted(.healthData))
        await model.setShareWorkoutData(false)
        #expect(!model.sharesWorkoutData && !model.draft.shareWorkoutData)
        await model.setConsent(.healthData, granted: true)
        #expect(model.isGranted(.healthData))
        await model.setConsent(.healthData, granted: true, version: "")
        #expect(model.error?.kind == .invalidInput && model.isGranted(.healthData))
    }

    @Test func exportWritesAFile() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.exportData)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("profile-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = ProfileModel(dependencies: fixture.dependencies, exportDirectory: directory)
        await model.export()
        let url = try #require(model.exportFileURL)
        #expect(url.lastPathComponent == "fitbase-export-2026-03-02.json")
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        #expect(document?["userId"] as? String == FakeData.user.id.description)

        let unwritable = ProfileModel(dependencies: fixture.dependencies, exportDirectory: directory.appendingPathComponent("missing"))
        await unwritable.export()
        #expect(unwritable.error?.kind == .storage && unwritable.exportFileURL == nil)
    }

    @Test func deletingTheAccountNeedsReauthentication() async {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.deleteAccount)
        let auth = AuthModel(dependencies: fixture.dependencies)
        await auth.start()
        let model = ProfileModel(dependencies: fixture.dependencies)
        model.requestAccountDeletion()
        #expect(model.needsReauthentication)
        await model.deleteAccount(.password("wrong"))
        #expect(model.error?.kind == .invalidCredentials && model.needsReauthentication && !model.isAccountDeleted)
        await model.deleteAccount(.google(idToken: "fake:someone@example.com", nonce: nil))
        #expect(model.error?.kind == .invalidCredentials)
        await model.deleteAccount(.password(FakeData.password))
        #expect(model.isAccountDeleted && !model.needsReauthentication && model.error == nil)
        #expect(fixture.events.last == .accountDeleted)
        await eventually { auth.state == .signedOut(.accountDeleted) }
        auth.stop()
    }

    @Test func deletingWithAppleAndSigningOut() async {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.deleteAccount)
        let model = ProfileModel(dependencies: fixture.dependencies)
        await model.deleteAccount(.apple(AppleCredential(identityToken: "fake:\(FakeData.user.email!)", rawNonce: "n")))
        #expect(model.isAccountDeleted)
        let otherFixture = Fixture(.strict)
        otherFixture.fakes.auth.knobs.implement(.signOut)
        otherFixture.fakes.profile.knobs.implement(.profile)
        let other = ProfileModel(dependencies: otherFixture.dependencies)
        await other.signOut()
        await other.load()
        #expect(other.error?.kind == .notSignedIn)
    }

    @Test func offline() async {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.exportData, .profile, .saveProfile, .setShareWorkoutData)
        fixture.fakes.profile.knobs.failEverything(with: .offline)
        let model = ProfileModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.error?.isOffline == true && model.profile == nil && !model.isLoading)
        model.draft.displayName = "Ana"
        await model.save()
        #expect(model.error?.isOffline == true)
        await model.setShareWorkoutData(false)
        await model.export()
        #expect(model.error?.isOffline == true && model.exportFileURL == nil)
    }
}

/// The profile photo on screen: loaded through the media service, replaced with progress, a refused image named under
/// `photo`, removed.
@MainActor @Suite struct ProfilePhotoModelTests {
    @Test func uploadFollowsProgressThenShowsThePhotoAndARefusedImageIsNamed() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.media.knobs.implement(.uploadProfilePhoto, .profilePhoto, .imageData, .removeProfilePhoto)
        let user = try #require(await fixture.fakes.auth.signedInUser()?.id)
        let model = ProfilePhotoModel(user: user, dependencies: fixture.dependencies)
        await model.load()
        #expect(model.image == nil && model.error == nil)

        let image = Data([0xFF, 0xD8, 0xFF]) + Data(repeating: 7, count: 300_000)
        await model.upload(image)
        #expect(model.uploadProgress == nil && model.image == image && model.error == nil)
        #expect(fixture.fakes.media.knobs.callCount(.uploadProfilePhoto) == 1)

        await model.upload(Data("not an image".utf8))
        #expect(model.fieldErrors["photo"] != nil && model.error?.kind == .invalidInput && model.image == image)

        await model.remove()
        #expect(model.image == nil)
        await model.load()
        #expect(model.image == nil)
    }

    @Test func progressIsShownWhileTheUploadIsUnderWay() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.media.knobs.implement(.uploadProfilePhoto, .profilePhoto, .imageData)
        fixture.fakes.media.knobs.latency = .seconds(1)
        let user = try #require(await fixture.fakes.auth.signedInUser()?.id)
        let model = ProfilePhotoModel(user: user, dependencies: fixture.dependencies)
        let image = Data([0x89, 0x50, 0x4E, 0x47]) + Data(repeating: 1, count: 100)
        let upload = Task { await model.upload(image) }
        await fixture.clock.waitForSleepers()
        #expect(model.uploadProgress == UploadProgress(sent: 0, total: Int64(image.count)))
        fixture.fakes.media.knobs.latency = .zero
        fixture.clock.advance(by: .seconds(1))
        await upload.value
        #expect(model.uploadProgress == nil && model.image == image)
    }
}
