import type { RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

/**
 * What the account may do to the key: see it, describe and tag it, enable and disable it, change
 * its policy and schedule its deletion. Not `kms:CreateGrant` (a grant could hand out
 * `kms:GenerateMac` beside the key policy) and no cryptographic operation but verification.
 */
const KEY_ADMINISTRATION = [
  'kms:Describe*',
  'kms:List*',
  'kms:Get*',
  'kms:Enable*',
  'kms:Disable*',
  'kms:Put*',
  'kms:Update*',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:CreateAlias',
  'kms:DeleteAlias',
  'kms:RevokeGrant',
  'kms:RetireGrant',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
];

/** Props of {@link ConfigMacKey}. */
export interface ConfigMacKeyProps {
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The KMS HMAC key whose MACs make source configs and secret bindings trusted
 * (lib/engine/sources/config-trust.ts). Only the API role may generate a MAC; the page worker may only
 * verify one, so no function but the API can produce a config a worker will send a secret for.
 * HMAC keys have no automatic rotation in KMS; replacing the key means saving every source again.
 *
 * The key policy says so itself, rather than deferring to the account's IAM: the account may
 * administer the key and delegate `kms:VerifyMac` through IAM, but it holds no `kms:*`, no
 * `kms:CreateGrant`, and `kms:GenerateMac` is denied to every principal but the signing role, so
 * no IAM policy (PowerUserAccess included) lets anyone else sign a config the workers trust. The
 * one way around it is an administrator's: rewriting the key policy (`kms:PutKeyPolicy`, which
 * the stack's deployments need), recorded by CloudTrail.
 */
export class ConfigMacKey extends Construct {
  readonly key: kms.Key;
  private signer: iam.IRole | undefined;

  constructor(scope: Construct, id: string, props: ConfigMacKeyProps) {
    super(scope, id);
    this.key = new kms.Key(this, 'Key', {
      description: 'Harvester: MACs of source configs and secret bindings (API signs, workers verify)',
      keySpec: kms.KeySpec.HMAC_256,
      keyUsage: kms.KeyUsage.GENERATE_VERIFY_MAC,
      removalPolicy: props.removalPolicy,
      policy: new iam.PolicyDocument({
        statements: [
          new iam.PolicyStatement({
            sid: 'AccountAdministersAndMayDelegateVerify',
            principals: [new iam.AccountRootPrincipal()],
            actions: [...KEY_ADMINISTRATION, 'kms:VerifyMac'],
            resources: ['*'],
          }),
        ],
      }),
    });
  }

  /**
   * `kms:GenerateMac` and `kms:VerifyMac` (the API signs and checks what it reads back), in the
   * key policy as well as the role's, and `kms:GenerateMac` denied to everyone else. One signer.
   */
  grantSign(role: iam.IRole): void {
    if (this.signer) throw new Error('the config MAC key has one signer: the API role');
    this.signer = role;
    this.key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'OnlyTheApiRoleSigns',
        principals: [new iam.ArnPrincipal(role.roleArn)],
        actions: ['kms:GenerateMac', 'kms:VerifyMac'],
        resources: ['*'],
      }),
    );
    this.key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'NoOtherSigner',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['kms:GenerateMac'],
        resources: ['*'],
        conditions: { ArnNotEquals: { 'aws:PrincipalArn': role.roleArn } },
      }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['kms:GenerateMac', 'kms:VerifyMac'],
        resources: [this.key.keyArn],
      }),
    );
  }

  /** `kms:VerifyMac` only. */
  grantVerify(role: iam.IRole): void {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['kms:VerifyMac'], resources: [this.key.keyArn] }),
    );
  }
}
