#!/usr/bin/env bash
# The README's road from a folder of faces to a fine-tuned model, on generated faces, every command
# as documented: held-out pairs -> RecordIO -> training from scratch (validated on the held-out
# people) -> fine-tuning from its best/ on OTHER people -> held-out accuracy of both -> export ->
# a comparison of two faces. Runs from the repository root with nothing beside it.
#
#   bash tools/quickstart.sh [WORK_DIR]        # default WORK_DIR: output/quickstart (replaced when an
#                                              # earlier quickstart made it; any other folder is refused)
#   QUICKSTART_SHORT=1 bash tools/quickstart.sh  # 32x32 faces, 3 epochs in all: the CI form
#
# The default form trains 112x112 crops, 10 + 5 epochs (the recipes' own lengths are 20 and 10).
# Generated faces teach little about people the model has not seen: expect the held-out accuracy
# to stay modest, and read the two figures the last step prints rather than the training logs.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"   # this checkout's paddle_pfc, installed or not
WORK=${1:-output/quickstart}
PY=${PYTHON:-python}
if [[ "${QUICKSTART_SHORT:-0}" == 1 ]]; then
    SIZE=32; SCRATCH_EPOCHS=2; FINETUNE_EPOCHS=1; FREEZE=3; GENUINE=20
else
    SIZE=112; SCRATCH_EPOCHS=10; FINETUNE_EPOCHS=5; FREEZE=10; GENUINE=200
fi
# WORK is replaced only when an earlier quickstart made it (its marker file), never another folder.
if [[ -e "$WORK" && -n "$(ls -A "$WORK" 2>/dev/null)" && ! -e "$WORK/.paddle_pfc_quickstart" ]]; then
    echo "quickstart: $WORK exists and was not made by this script: give another folder" >&2
    exit 2
fi
rm -rf "$WORK"
mkdir -p "$WORK"
touch "$WORK/.paddle_pfc_quickstart"
WORK=$(cd "$WORK" && pwd)
step() { echo; echo "== $*"; }

step "1. your faces: 20 generated people, 10 images each, one sub-folder per person (with your own: your folder)"
$PY tools/make_sample_faces.py --out "$WORK/my_faces" --identities 20 --images 10 --size $SIZE --pairs 20
rm "$WORK/my_faces/label.txt"   # a folder of your own has none: step 2 writes it from the sub-folders
$PY tools/make_sample_faces.py --out "$WORK/other_faces" --identities 20 --images 10 --size $SIZE --pairs 20 --seed 1

step "2. label.txt from the sub-folders; hold 6 people out of training: their pairs in my_faces/pairs.bin, the other 14 in train_label.txt"
$PY tools/pairs.py --root "$WORK/my_faces" --holdout-ids 6 --max-genuine $GENUINE

step "3. convert the 14 training people to RecordIO (pairs.bin is copied next to train.rec)"
$PY tools/im2rec.py --root "$WORK/my_faces" --label-file train_label.txt --output "$WORK/my_faces_rec" --workers 0

step "4. train from scratch (configs/train_small.yaml), validated on the 6 held-out people"
$PY tools/train.py -c configs/train_small.yaml -o data.root="$WORK/my_faces_rec" -o data.num_classes=14 \
    -o model.input_size=$SIZE -o train.epochs=$SCRATCH_EPOCHS -o train.output_dir="$WORK/scratch"

step "5. fine-tune its best/ on 20 other people (configs/finetune_small.yaml), validated on the same held-out people"
$PY tools/im2rec.py --root "$WORK/other_faces" --output "$WORK/other_faces_rec" --workers 0
$PY tools/train.py -c configs/finetune_small.yaml --pretrained "$WORK/scratch/best" \
    -o data.root="$WORK/other_faces_rec" -o data.num_classes=20 -o model.input_size=$SIZE \
    -o train.epochs=$FINETUNE_EPOCHS -o train.freeze_backbone_steps=$FREEZE \
    -o "validation.sets=[{name: heldout, path: $WORK/my_faces_rec/pairs.bin}]" -o train.output_dir="$WORK/finetune"

step "6. validate both on the held-out pairs"
$PY tools/validate.py --checkpoint "$WORK/scratch/best" --bin "$WORK/my_faces/pairs.bin" --nrof-folds 5 \
    --json "$WORK/scratch.json"
$PY tools/validate.py --checkpoint "$WORK/finetune/best" --bin "$WORK/my_faces/pairs.bin" --nrof-folds 5 \
    --json "$WORK/finetune.json"

step "7. export the fine-tuned model"
$PY tools/export.py --checkpoint "$WORK/finetune/best" --out "$WORK/model"
step "8. compare two held-out people (at the threshold best/'s validation recorded, which export copied)"
read -r FACE_A FACE_B < <($PY -c "
import sys
held = {l.split()[0].split('/')[0] for l in open(sys.argv[1] + '/label.txt')} - \
       {l.split()[0].split('/')[0] for l in open(sys.argv[1] + '/train_label.txt')}
a, b = sorted(held)[:2]
print(f'{sys.argv[1]}/{a}/0000.jpg {sys.argv[1]}/{b}/0000.jpg')" "$WORK/my_faces")
$PY tools/infer.py --model "$WORK/model" --compare "$FACE_A" "$FACE_B"

$PY - "$WORK" <<'EOF'
import json, sys
work = sys.argv[1]
accuracy = {run: json.load(open(f"{work}/{run}.json"))["sets"]["pairs"]["accuracy"] for run in ("scratch", "finetune")}
best_step = {run: json.load(open(f"{work}/{run}/best/meta.json"))["global_step"] for run in ("scratch", "finetune")}
print()
print("held-out accuracy (6 people in neither training set):")
for run, name in (("scratch", "from scratch"), ("finetune", "fine-tuned  ")):
    note = " (the model as it started: no validation improved on step 0)" if best_step[run] == 0 else ""
    print(f"  {name} {accuracy[run]:.3f}  best/ of step {best_step[run]}{note}")
EOF
echo
echo "quickstart done: the model is in $WORK/model"
