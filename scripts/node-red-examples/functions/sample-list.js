// The samples, when a folder holds them (the demo sets SINGPASS_SAMPLES_DIR); otherwise the page offers upload only.
msg.payload = env.get('SINGPASS_SAMPLES_DIR') ? SAMPLES : [];
return msg;
