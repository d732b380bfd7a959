/**
 * The community rule files, embedded as text so that a compiled binary carries them.
 * Add a file here when adding one to rules/ (test/detect/rules.test.ts checks that none is missing).
 */
import ai from "./ai.yaml" with { type: "text" };
import anthropic from "./anthropic.yaml" with { type: "text" };
import aws from "./aws.yaml" with { type: "text" };
import azure from "./azure.yaml" with { type: "text" };
import ci from "./ci.yaml" with { type: "text" };
import cloud from "./cloud.yaml" with { type: "text" };
import config from "./config.yaml" with { type: "text" };
import crypto from "./crypto.yaml" with { type: "text" };
import data from "./data.yaml" with { type: "text" };
import devops from "./devops.yaml" with { type: "text" };
import generic from "./generic.yaml" with { type: "text" };
import github from "./github.yaml" with { type: "text" };
import gitlab from "./gitlab.yaml" with { type: "text" };
import google from "./google.yaml" with { type: "text" };
import injection from "./injection.yaml" with { type: "text" };
import jwt from "./jwt.yaml" with { type: "text" };
import messaging from "./messaging.yaml" with { type: "text" };
import observability from "./observability.yaml" with { type: "text" };
import openai from "./openai.yaml" with { type: "text" };
import packages from "./packages.yaml" with { type: "text" };
import payments from "./payments.yaml" with { type: "text" };
import pii from "./pii.yaml" with { type: "text" };
import private_keys from "./private_keys.yaml" with { type: "text" };
import proprietary from "./proprietary.yaml" with { type: "text" };
import saas from "./saas.yaml" with { type: "text" };
import slack from "./slack.yaml" with { type: "text" };
import stripe from "./stripe.yaml" with { type: "text" };
import urls from "./urls.yaml" with { type: "text" };

export const RULE_FILES: { file: string; text: string }[] = [
  { file: "rules/ai.yaml", text: ai as unknown as string },
  { file: "rules/anthropic.yaml", text: anthropic as unknown as string },
  { file: "rules/aws.yaml", text: aws as unknown as string },
  { file: "rules/azure.yaml", text: azure as unknown as string },
  { file: "rules/ci.yaml", text: ci as unknown as string },
  { file: "rules/cloud.yaml", text: cloud as unknown as string },
  { file: "rules/config.yaml", text: config as unknown as string },
  { file: "rules/crypto.yaml", text: crypto as unknown as string },
  { file: "rules/data.yaml", text: data as unknown as string },
  { file: "rules/devops.yaml", text: devops as unknown as string },
  { file: "rules/generic.yaml", text: generic as unknown as string },
  { file: "rules/github.yaml", text: github as unknown as string },
  { file: "rules/gitlab.yaml", text: gitlab as unknown as string },
  { file: "rules/google.yaml", text: google as unknown as string },
  { file: "rules/injection.yaml", text: injection as unknown as string },
  { file: "rules/jwt.yaml", text: jwt as unknown as string },
  { file: "rules/messaging.yaml", text: messaging as unknown as string },
  { file: "rules/observability.yaml", text: observability as unknown as string },
  { file: "rules/openai.yaml", text: openai as unknown as string },
  { file: "rules/packages.yaml", text: packages as unknown as string },
  { file: "rules/payments.yaml", text: payments as unknown as string },
  { file: "rules/pii.yaml", text: pii as unknown as string },
  { file: "rules/private_keys.yaml", text: private_keys as unknown as string },
  { file: "rules/proprietary.yaml", text: proprietary as unknown as string },
  { file: "rules/saas.yaml", text: saas as unknown as string },
  { file: "rules/slack.yaml", text: slack as unknown as string },
  { file: "rules/stripe.yaml", text: stripe as unknown as string },
  { file: "rules/urls.yaml", text: urls as unknown as string },
];
