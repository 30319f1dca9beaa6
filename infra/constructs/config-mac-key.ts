import type { RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

/** Props of {@link ConfigMacKey}. */
export interface ConfigMacKeyProps {
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The KMS HMAC key whose MACs make source configs and secret bindings trusted
 * (lib/engine/sources/config-trust.ts). Only the API role may generate a MAC; the page worker may only
 * verify one, so no function but the API can produce a config a worker will send a secret for.
 * HMAC keys have no automatic rotation in KMS; replacing the key means saving every source again.
 */
export class ConfigMacKey extends Construct {
  readonly key: kms.Key;

  constructor(scope: Construct, id: string, props: ConfigMacKeyProps) {
    super(scope, id);
    this.key = new kms.Key(this, 'Key', {
      description: 'Harvester: MACs of source configs and secret bindings (API signs, workers verify)',
      keySpec: kms.KeySpec.HMAC_256,
      keyUsage: kms.KeyUsage.GENERATE_VERIFY_MAC,
      removalPolicy: props.removalPolicy,
    });
  }

  /** `kms:GenerateMac` and `kms:VerifyMac` (the API signs and checks what it reads back). */
  grantSign(role: iam.IRole): void {
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
